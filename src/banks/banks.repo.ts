import { PgCode, pgConstraint, pgErrorCode, type Queryable } from '../db/pool.js';
import { DomainError } from '../errors.js';

export interface BankRow {
  code: string;
  name: string;
  country: string;
  kind: 'bank' | 'operator';
  is_active: boolean;
  /** For a bank code that also names a mobile operator (mts): that operator's code. */
  operator_code: string | null;
}

const COLUMNS = 'code, name, country, kind, is_active, operator_code';

export async function listBanks(db: Queryable, onlyActive: boolean): Promise<BankRow[]> {
  const { rows } = await db.query<BankRow>(`SELECT ${COLUMNS} FROM banks ${onlyActive ? 'WHERE is_active' : ''}`);
  return rows;
}

/** A directory entry; `lock` takes its row (the lock its update takes) for a change in the same transaction. */
export async function findBank(db: Queryable, code: string, lock = false): Promise<BankRow | undefined> {
  const { rows } = await db.query<BankRow>(`SELECT ${COLUMNS} FROM banks WHERE code = $1${lock ? ' FOR NO KEY UPDATE' : ''}`, [code]);
  return rows[0];
}

/**
 * The entry `code` stands for where a bank or a mobile operator is meant: a code that names both
 * (mts: МТС Банк and the operator МТС) is its operator entry where an operator is meant.
 */
export async function findBankAs(db: Queryable, code: string, meant: 'bank' | 'operator'): Promise<BankRow | undefined> {
  const entry = await findBank(db, code);
  if (meant === 'operator' && entry?.kind === 'bank' && entry.operator_code) return findBank(db, entry.operator_code);
  return entry;
}

/** Adds a directory entry; CONFLICT when its code is taken. */
export async function insertBank(db: Queryable, bank: Omit<BankRow, 'is_active' | 'operator_code'> & { is_active?: boolean }): Promise<BankRow> {
  try {
    const { rows } = await db.query<BankRow>(`INSERT INTO banks (code, name, country, kind, is_active) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`, [
      bank.code,
      bank.name,
      bank.country,
      bank.kind,
      bank.is_active ?? true,
    ]);
    return rows[0]!;
  } catch (err) {
    if (pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'banks_pkey') {
      throw new DomainError('CONFLICT', `Bank code ${bank.code} already exists; change it with PATCH /admin/v1/banks/${bank.code}`);
    }
    throw err;
  }
}

export async function updateBank(
  db: Queryable,
  code: string,
  patch: Partial<Pick<BankRow, 'name' | 'country' | 'kind' | 'is_active' | 'operator_code'>>,
): Promise<BankRow | undefined> {
  // operator_code may be cleared: null sets null, absent keeps it.
  const { rows } = await db.query<BankRow>(
    `UPDATE banks SET name = coalesce($2, name), country = coalesce($3, country), kind = coalesce($4, kind),
            is_active = coalesce($5, is_active),
            operator_code = CASE WHEN $6 THEN $7 ELSE operator_code END, updated_at = now()
      WHERE code = $1 RETURNING ${COLUMNS}`,
    [
      code,
      patch.name ?? null,
      patch.country ?? null,
      patch.kind ?? null,
      patch.is_active ?? null,
      patch.operator_code !== undefined,
      patch.operator_code ?? null,
    ],
  );
  return rows[0];
}
