-- People who sign in (DESIGN.md "People, sessions and roles (contract)"): operator staff by role,
-- and the executors' and merchants' own sign-ins, each tied to the one executor or merchant it
-- may act for. The bearer ADMIN_TOKEN stays for machines and the CLI.
CREATE TABLE users (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email               text NOT NULL CHECK (email = lower(email) AND email ~ '^[^@\s]+@[^@\s]+$'),
  role                text NOT NULL CHECK (role IN ('admin', 'support', 'finance', 'executor', 'merchant')),
  executor_id         uuid REFERENCES executors (id),
  merchant_id         uuid REFERENCES merchants (id),
  -- Argon2id, in its PHC string form (algorithm, parameters and salt travel with the hash).
  password_hash       text NOT NULL,
  is_active           boolean NOT NULL DEFAULT true,
  -- TOTP (RFC 6238): the secret sealed with the master key; enrolled once confirmed with a code.
  -- totp_last_step is the last time step accepted, so a code cannot be replayed in its window.
  totp_secret         text,
  totp_enabled_at     timestamptz,
  totp_last_step      bigint,
  -- SHA-256 (hex) of the unused recovery codes; a used code leaves the array.
  recovery_codes      text[] NOT NULL DEFAULT '{}',
  password_changed_at timestamptz NOT NULL DEFAULT now(),
  created_at          timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT users_email_key UNIQUE (email),
  CONSTRAINT users_executor_owner CHECK ((role = 'executor') = (executor_id IS NOT NULL)),
  CONSTRAINT users_merchant_owner CHECK ((role = 'merchant') = (merchant_id IS NOT NULL)),
  CONSTRAINT users_totp_enabled_has_secret CHECK (totp_enabled_at IS NULL OR totp_secret IS NOT NULL)
);

-- Server-side sessions: the cookie holds a random token, the table its SHA-256, so a copy of the
-- database signs nobody in. Revoking is setting revoked_at; idle and absolute expiry are checked
-- on every request.
CREATE TABLE sessions (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash     bytea NOT NULL UNIQUE,
  user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token     text NOT NULL,
  ip             text,
  user_agent     text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_seen_at   timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  -- When the person last confirmed it was them (a code, or the password without two-factor):
  -- risky actions need it recent.
  confirmed_at   timestamptz,
  revoked_at     timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id, created_at DESC);

-- Failed sign-ins per email, whether or not a user has it, so that an unknown email is slowed and
-- locked exactly as a known one and the answer tells nothing.
CREATE TABLE login_throttle (
  email          text PRIMARY KEY,
  failures       integer NOT NULL DEFAULT 0,
  last_failed_at timestamptz NOT NULL DEFAULT now(),
  locked_until   timestamptz
);

-- The audit log names the person (or "token") and their address apart.
ALTER TABLE audit_log ADD COLUMN user_id uuid REFERENCES users (id), ADD COLUMN ip text;
CREATE INDEX audit_log_created ON audit_log (created_at DESC, id DESC);
CREATE INDEX audit_log_user ON audit_log (user_id, created_at DESC) WHERE user_id IS NOT NULL;
