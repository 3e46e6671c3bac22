import { prepared, type Queryable } from '../db/pool.js';

export interface ExecutorRow {
  id: string;
  name: string;
  is_active: boolean;
  created_at: Date;
}

const COLUMNS = 'id, name, is_active, created_at';

export async function insertExecutor(db: Queryable, name: string, tokenHash: Buffer): Promise<ExecutorRow> {
  const { rows } = await db.query<ExecutorRow>(`INSERT INTO executors (name, token_hash) VALUES ($1, $2) RETURNING ${COLUMNS}`, [name, tokenHash]);
  return rows[0]!;
}

export async function findExecutor(db: Queryable, id: string): Promise<ExecutorRow | undefined> {
  const { rows } = await db.query<ExecutorRow>(`SELECT ${COLUMNS} FROM executors WHERE id = $1`, [id]);
  return rows[0];
}

export async function findExecutorByToken(db: Queryable, tokenHash: Buffer): Promise<ExecutorRow | undefined> {
  const { rows } = await db.query<ExecutorRow>(prepared(`SELECT ${COLUMNS} FROM executors WHERE token_hash = $1`, [tokenHash]));
  return rows[0];
}

export async function listExecutors(db: Queryable): Promise<(ExecutorRow & { requisites: number })[]> {
  const { rows } = await db.query<ExecutorRow & { requisites: number }>(
    `SELECT e.id, e.name, e.is_active, e.created_at, (SELECT count(*) FROM requisites r WHERE r.executor_id = e.id) AS requisites
       FROM executors e ORDER BY e.created_at`,
  );
  return rows;
}

export async function updateExecutor(db: Queryable, id: string, patch: { name?: string; isActive?: boolean }): Promise<ExecutorRow | undefined> {
  const { rows } = await db.query<ExecutorRow>(
    `UPDATE executors SET name = coalesce($2, name), is_active = coalesce($3, is_active), updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, patch.name ?? null, patch.isActive ?? null],
  );
  return rows[0];
}

export async function replaceToken(db: Queryable, id: string, tokenHash: Buffer): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE executors SET token_hash = $2, updated_at = now() WHERE id = $1', [id, tokenHash]);
  return (rowCount ?? 0) > 0;
}
