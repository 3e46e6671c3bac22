-- Telegram (issue 37; DESIGN.md "Telegram (contract)"): people link a chat to their sign-in, and
-- what concerns them is written to an outbox in the transaction of the event and sent by the worker.

-- A person's linked chat: one chat per person, one person per chat.
CREATE TABLE telegram_chats (
  user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  chat_id    bigint NOT NULL UNIQUE,
  username   text,
  -- The language messages are written in ('ru' or 'en'): the person's choice, else Telegram's.
  language   text NOT NULL DEFAULT 'ru' CHECK (language IN ('ru', 'en')),
  linked_at  timestamptz NOT NULL DEFAULT now()
);

-- One-time link codes: the SHA-256 of the code (a copy of the database links nobody), good once
-- for 10 minutes.
CREATE TABLE telegram_link_codes (
  code_hash  bytea PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);
CREATE INDEX telegram_link_codes_user ON telegram_link_codes (user_id);

-- What a person switched off (everything is on until switched off): one row per (person, kind).
CREATE TABLE telegram_switches (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind    text NOT NULL CHECK (kind ~ '^[a-z_]+$'),
  enabled boolean NOT NULL,
  PRIMARY KEY (user_id, kind)
);

-- The outbox: one row per (person, event), written in the event's transaction, sent once by
-- whichever instance's worker claims it (FOR UPDATE SKIP LOCKED), retried on 429 after Telegram's
-- retry_after and on network errors with backoff; a chat that blocked the bot (403) is unlinked and
-- its messages given up.
CREATE TABLE telegram_messages (
  id           bigserial PRIMARY KEY,
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The kind of message ('dispute_opened', 'payout_available', 'alert_rate_stale', ...): what the
  -- person's switch names and what the text is made from.
  kind         text NOT NULL CHECK (kind ~ '^[a-z_]+$'),
  -- Names the event, so one event reaches one person once: 'dispute:<id>', 'alert:rate_stale:RUB:<window>'.
  event_key    text NOT NULL,
  -- What the text is made from, in the person's language at sending (amounts as strings).
  data         jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  send_after   timestamptz NOT NULL DEFAULT now(),
  attempts     integer NOT NULL DEFAULT 0,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  sent_at      timestamptz,
  last_error   text,
  -- Telegram's message_id once sent (buttons edit their message).
  message_id   bigint,
  CONSTRAINT telegram_messages_once UNIQUE (user_id, event_key)
);
CREATE INDEX telegram_messages_due ON telegram_messages (send_after) WHERE status = 'pending';
