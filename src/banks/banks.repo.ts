import type { Queryable } from '../db/pool.js';

export interface BankRow {
  code: string;
  name: string;
  country: string;
  kind: 'bank' | 'operator';
  is_active: boolean;
}

const COLUMNS = 'code, name, country, kind, is_active';

export async function listBanks(db: Queryable, onlyActive: boolean): Promise<BankRow[]> {
  const { rows } = await db.query<BankRow>(
    `SELECT ${COLUMNS} FROM banks ${onlyActive ? 'WHERE is_active' : ''}`,
  );
  return rows;
}

export async function findBank(db: Queryable, code: string): Promise<BankRow | undefined> {
  const { rows } = await db.query<BankRow>(`SELECT ${COLUMNS} FROM banks WHERE code = $1`, [code]);
  return rows[0];
}

export async function insertBank(db: Queryable, bank: Omit<BankRow, 'is_active'> & { is_active?: boolean }): Promise<BankRow> {
  const { rows } = await db.query<BankRow>(
    `INSERT INTO banks (code, name, country, kind, is_active) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [bank.code, bank.name, bank.country, bank.kind, bank.is_active ?? true],
  );
  return rows[0]!;
}

export async function updateBank(
  db: Queryable,
  code: string,
  patch: Partial<Pick<BankRow, 'name' | 'country' | 'kind' | 'is_active'>>,
): Promise<BankRow | undefined> {
  const { rows } = await db.query<BankRow>(
    `UPDATE banks SET name = coalesce($2, name), country = coalesce($3, country), kind = coalesce($4, kind),
            is_active = coalesce($5, is_active), updated_at = now()
      WHERE code = $1 RETURNING ${COLUMNS}`,
    [code, patch.name ?? null, patch.country ?? null, patch.kind ?? null, patch.is_active ?? null],
  );
  return rows[0];
}
