import type { Queryable } from '../db/pool.js';
import { PgCode, pgConstraint, pgErrorCode } from '../db/pool.js';
import { DomainError } from '../errors.js';

import type { Role } from '../lib/actor.js';

/** The roles live beside the Actor (src/lib/actor.ts), which the audit log and every feature take. */
export { ROLES, type Role, STAFF_ROLES, type StaffRole } from '../lib/actor.js';

export interface UserRow {
  id: string;
  email: string;
  role: Role;
  executor_id: string | null;
  merchant_id: string | null;
  password_hash: string;
  is_active: boolean;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  totp_last_step: string | null;
  recovery_codes: string[];
  /** The password was generated (created or reset by an admin): the person chooses their own first. */
  must_change_password: boolean;
  password_changed_at: Date;
  created_at: Date;
}

export interface NewUser {
  email: string;
  role: Role;
  passwordHash: string;
  executorId?: string | null;
  merchantId?: string | null;
  mustChangePassword?: boolean;
}

/** Inserts a user; an email already taken is a CONFLICT naming it. */
export async function insertUser(db: Queryable, user: NewUser): Promise<UserRow> {
  try {
    const { rows } = await db.query<UserRow>(
      `INSERT INTO users (email, role, password_hash, executor_id, merchant_id, must_change_password) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [user.email, user.role, user.passwordHash, user.executorId ?? null, user.merchantId ?? null, user.mustChangePassword ?? false],
    );
    return rows[0]!;
  } catch (err) {
    if (pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'users_email_key') {
      throw new DomainError('CONFLICT', `A user with the email ${user.email} already exists`, { email: user.email });
    }
    if (pgErrorCode(err) === PgCode.foreignKeyViolation) {
      const owner = pgConstraint(err) === 'users_executor_id_fkey' ? `Executor ${user.executorId}` : `Merchant ${user.merchantId}`;
      throw new DomainError('NOT_FOUND', `${owner} not found`);
    }
    throw err;
  }
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE email = $1', [email]);
  return rows[0];
}

/** A user by id; `lock` takes the row for an update in the same transaction. */
export async function findUser(db: Queryable, id: string, lock = false): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>(`SELECT * FROM users WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

export interface UserFilter {
  role?: Role;
  /** Part of the email. */
  q?: string;
  limit: number;
  offset: number;
}

export async function listUsers(db: Queryable, filter: UserFilter): Promise<{ rows: UserRow[]; total: number }> {
  const { rows } = await db.query<UserRow & { total: string }>(
    `SELECT *, count(*) OVER () AS total FROM users
      WHERE ($1::text IS NULL OR role = $1) AND ($2::text IS NULL OR strpos(email, lower($2)) > 0)
      ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
    [filter.role ?? null, filter.q ?? null, filter.limit, filter.offset],
  );
  return { rows, total: Number(rows[0]?.total ?? 0) };
}

export async function updateUserFields(db: Queryable, id: string, fields: { role?: Role; is_active?: boolean }): Promise<UserRow> {
  const { rows } = await db.query<UserRow>(`UPDATE users SET role = COALESCE($2, role), is_active = COALESCE($3, is_active) WHERE id = $1 RETURNING *`, [
    id,
    fields.role ?? null,
    fields.is_active ?? null,
  ]);
  return rows[0]!;
}

/** Sets a new password hash; `mustChange` when it was generated for the person (they choose their own next). */
export async function setPasswordHash(db: Queryable, id: string, passwordHash: string, mustChange = false): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2, password_changed_at = now(), must_change_password = $3 WHERE id = $1', [id, passwordHash, mustChange]);
}

/** Stores a new, not yet confirmed TOTP secret (enrolment started); an enrolled factor stays as it is. */
export async function setPendingTotpSecret(db: Queryable, id: string, sealedSecret: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE users SET totp_secret = $2, totp_last_step = NULL WHERE id = $1 AND totp_enabled_at IS NULL', [id, sealedSecret]);
  return rowCount === 1;
}

/** Turns two-factor on with the given recovery-code hashes, once the pending secret was confirmed. */
export async function enableTotp(db: Queryable, id: string, recoveryCodeHashes: string[]): Promise<void> {
  await db.query('UPDATE users SET totp_enabled_at = now(), recovery_codes = $2 WHERE id = $1 AND totp_secret IS NOT NULL', [id, recoveryCodeHashes]);
}

export async function disableTotp(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, recovery_codes = '{}' WHERE id = $1`, [id]);
}

/**
 * Accepts a TOTP time step once: true only when it is later than the last step accepted, so a
 * code seen over a shoulder (or sent twice at once) signs in one time at most.
 */
export async function acceptTotpStep(db: Queryable, id: string, step: number): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2)', [id, step]);
  return rowCount === 1;
}

/** Spends a recovery code: true when it was unused (and is now gone). */
export async function spendRecoveryCode(db: Queryable, id: string, codeHash: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE users SET recovery_codes = array_remove(recovery_codes, $2) WHERE id = $1 AND $2 = ANY (recovery_codes)', [
    id,
    codeHash,
  ]);
  return rowCount === 1;
}
