import { prepared, type Queryable } from '../db/pool.js';

export interface RequisiteRow {
  id: string;
  executor_id: string;
  type: string;
  value: string;
  bank_code: string | null;
  holder: string;
  currency: string;
  country: string;
  methods: string[];
  min_amount: string;
  max_amount: string | null;
  is_active: boolean;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, executor_id, type, value, bank_code, holder, currency, country, methods, min_amount, max_amount,
  is_active, last_used_at, created_at`;

export type RequisiteFields = Omit<RequisiteRow, 'id' | 'last_used_at' | 'created_at'>;

export async function insertRequisite(db: Queryable, r: RequisiteFields): Promise<RequisiteRow> {
  const { rows } = await db.query<RequisiteRow>(
    `INSERT INTO requisites (executor_id, type, value, bank_code, holder, currency, country, methods, min_amount, max_amount, is_active)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
    [r.executor_id, r.type, r.value, r.bank_code, r.holder, r.currency, r.country, r.methods, r.min_amount, r.max_amount, r.is_active],
  );
  return rows[0]!;
}

export async function findRequisite(db: Queryable, id: string): Promise<RequisiteRow | undefined> {
  const { rows } = await db.query<RequisiteRow>(prepared(`SELECT ${COLUMNS} FROM requisites WHERE id = $1`, [id]));
  return rows[0];
}

export async function updateRequisite(db: Queryable, id: string, r: RequisiteFields): Promise<RequisiteRow | undefined> {
  const { rows } = await db.query<RequisiteRow>(
    `UPDATE requisites SET type = $2, value = $3, bank_code = $4, holder = $5, currency = $6, country = $7, methods = $8,
            min_amount = $9, max_amount = $10, is_active = $11, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, r.type, r.value, r.bank_code, r.holder, r.currency, r.country, r.methods, r.min_amount, r.max_amount, r.is_active],
  );
  return rows[0];
}

export async function listRequisites(db: Queryable, filter: { executorId?: string }): Promise<RequisiteRow[]> {
  const { rows } = await db.query<RequisiteRow>(`SELECT ${COLUMNS} FROM requisites WHERE ($1::uuid IS NULL OR executor_id = $1) ORDER BY created_at, id`, [
    filter.executorId ?? null,
  ]);
  return rows;
}
