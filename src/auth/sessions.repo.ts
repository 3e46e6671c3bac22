import type { Queryable } from '../db/pool.js';
import type { Role } from './users.repo.js';

export interface SessionRow {
  id: string;
  user_id: string;
  csrf_token: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  confirmed_at: Date | null;
  revoked_at: Date | null;
}

/** A live session with what a request needs of its user, read in one query. */
export interface SessionWithUser extends SessionRow {
  email: string;
  role: Role;
  executor_id: string | null;
  merchant_id: string | null;
  is_active: boolean;
  two_factor: boolean;
  must_change_password: boolean;
  /** Seconds since the last request on this session. */
  idle_seconds: number;
  /** The operator's two_factor_roles setting (JSON), read in the same query. */
  two_factor_roles: string | null;
}

export interface NewSession {
  tokenHash: Buffer;
  userId: string;
  csrfToken: string;
  ip: string;
  userAgent: string | null;
  ttlSeconds: number;
  /** A sign-in with the second factor counts as a fresh confirmation. */
  confirmed: boolean;
}

export async function insertSession(db: Queryable, session: NewSession): Promise<SessionRow> {
  const { rows } = await db.query<SessionRow>(
    `INSERT INTO sessions (token_hash, user_id, csrf_token, ip, user_agent, expires_at, confirmed_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), CASE WHEN $7 THEN now() END) RETURNING *`,
    [session.tokenHash, session.userId, session.csrfToken, session.ip, session.userAgent?.slice(0, 300) ?? null, session.ttlSeconds, session.confirmed],
  );
  return rows[0]!;
}

/** The session a cookie names, unless revoked or past its absolute expiry. */
export async function findLiveSession(db: Queryable, tokenHash: Buffer): Promise<SessionWithUser | undefined> {
  const { rows } = await db.query<SessionWithUser>(
    `SELECT s.*, u.email, u.role, u.executor_id, u.merchant_id, u.is_active, u.totp_enabled_at IS NOT NULL AS two_factor,
            u.must_change_password,
            extract(epoch FROM now() - s.last_seen_at)::float8 AS idle_seconds,
            (SELECT value FROM settings WHERE key = 'two_factor_roles') AS two_factor_roles
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
    [tokenHash],
  );
  return rows[0];
}

/** Marks the session used now (its idle expiry counts from here). */
export async function touchSession(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE sessions SET last_seen_at = now() WHERE id = $1', [id]);
}

export async function confirmSession(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE sessions SET confirmed_at = now() WHERE id = $1', [id]);
}

/** The user's sessions still in force, newest first. */
export async function listUserSessions(db: Queryable, userId: string): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT * FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now() ORDER BY last_seen_at DESC LIMIT 100`,
    [userId],
  );
  return rows;
}

/** Revokes one of the user's own sessions; false when the user has no such live session. */
export async function revokeSession(db: Queryable, userId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL', [id, userId]);
  return rowCount === 1;
}

/** Revokes every live session of the user but `keep`; returns how many. */
export async function revokeUserSessions(db: Queryable, userId: string, keep?: string): Promise<number> {
  const { rowCount } = await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR id <> $2)', [
    userId,
    keep ?? null,
  ]);
  return rowCount ?? 0;
}

/** A sign-in attempt counted before its password or code is checked. */
export interface Attempt {
  /** Failures counted in the window before this attempt. */
  before: number;
  /** This attempt reached the limit and locked the email (lifted again if it proves right). */
  locked: boolean;
}

/**
 * Counts an attempt for the email (known or not) BEFORE its password or code is checked, in one
 * statement: the row's lock makes concurrent attempts — on any instance — take numbers one after
 * another, and an email already locked gets none. Failures older than the window are forgotten;
 * the attempt that reaches `lockAfter` locks the email for `lockSeconds`. A burst therefore gets
 * at most `lockAfter` checks; an attempt that proves right is handed back (refundAttempt) or
 * clears the count (clearThrottle). Answers the attempt, or the seconds the lock still holds.
 */
export async function reserveAttempt(
  db: Queryable,
  email: string,
  windowSeconds: number,
  lockAfter: number,
  lockSeconds: number,
): Promise<{ attempt: Attempt } | { lockedSeconds: number }> {
  for (;;) {
    const { rows } = await db.query<{ failures: number; locked: boolean }>(
      `INSERT INTO login_throttle AS t (email, failures, last_failed_at, locked_until)
       VALUES ($1, 1, now(), CASE WHEN $3 <= 1 THEN now() + make_interval(secs => $4) END)
       ON CONFLICT (email) DO UPDATE SET
         failures = CASE WHEN t.last_failed_at > now() - make_interval(secs => $2) THEN t.failures + 1 ELSE 1 END,
         last_failed_at = now(),
         locked_until = CASE WHEN (CASE WHEN t.last_failed_at > now() - make_interval(secs => $2) THEN t.failures + 1 ELSE 1 END) >= $3
                             THEN now() + make_interval(secs => $4) ELSE NULL END
       WHERE t.locked_until IS NULL OR t.locked_until <= now()
       RETURNING failures, coalesce(locked_until > now(), false) AS locked`,
      [email, windowSeconds, lockAfter, lockSeconds],
    );
    if (rows[0]) return { attempt: { before: rows[0].failures - 1, locked: rows[0].locked } };
    // Locked: how much longer (read afresh; a lock that ended in between lets the attempt be counted).
    const held = await db.query<{ seconds: number }>(
      `SELECT ceil(extract(epoch FROM locked_until - now()))::int AS seconds FROM login_throttle WHERE email = $1 AND locked_until > now()`,
      [email],
    );
    if (held.rows[0]) return { lockedSeconds: Math.max(1, held.rows[0].seconds) };
  }
}

/** Hands back an attempt that proved right without signing in (a code is still needed; a check inside a session). */
export async function refundAttempt(db: Queryable, email: string, attempt: Attempt): Promise<void> {
  await db.query(
    `UPDATE login_throttle SET failures = greatest(failures - 1, 0), locked_until = CASE WHEN $2 THEN NULL ELSE locked_until END WHERE email = $1`,
    [email, attempt.locked],
  );
}

export async function clearThrottle(db: Queryable, email: string): Promise<void> {
  await db.query('DELETE FROM login_throttle WHERE email = $1', [email]);
}
