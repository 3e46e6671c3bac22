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

export interface ThrottleRow {
  failures: number;
  locked_until: Date | null;
  /** Seconds the lock still holds; 0 when none. */
  locked_seconds: number;
}

export async function getThrottle(db: Queryable, email: string, windowSeconds: number): Promise<ThrottleRow | undefined> {
  const { rows } = await db.query<ThrottleRow>(
    `SELECT failures, locked_until, greatest(0, ceil(extract(epoch FROM locked_until - now())))::int AS locked_seconds
       FROM login_throttle WHERE email = $1 AND (last_failed_at > now() - make_interval(secs => $2) OR locked_until > now())`,
    [email, windowSeconds],
  );
  return rows[0];
}

/**
 * Counts a failed sign-in for the email (known or not). Failures older than the window are
 * forgotten; reaching `lockAfter` locks the email for `lockSeconds`. One statement, so two
 * failures racing both count.
 */
export async function recordFailure(db: Queryable, email: string, windowSeconds: number, lockAfter: number, lockSeconds: number): Promise<number> {
  const { rows } = await db.query<{ failures: number }>(
    `INSERT INTO login_throttle AS t (email, failures, last_failed_at) VALUES ($1, 1, now())
     ON CONFLICT (email) DO UPDATE SET
       failures = CASE WHEN t.last_failed_at > now() - make_interval(secs => $2) THEN t.failures + 1 ELSE 1 END,
       last_failed_at = now(),
       locked_until = CASE WHEN (CASE WHEN t.last_failed_at > now() - make_interval(secs => $2) THEN t.failures + 1 ELSE 1 END) >= $3
                           THEN now() + make_interval(secs => $4) ELSE t.locked_until END
     RETURNING failures`,
    [email, windowSeconds, lockAfter, lockSeconds],
  );
  return rows[0]!.failures;
}

export async function clearThrottle(db: Queryable, email: string): Promise<void> {
  await db.query('DELETE FROM login_throttle WHERE email = $1', [email]);
}
