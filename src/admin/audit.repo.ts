import type { Queryable } from '../db/pool.js';

/** One line of the audit log; `before` and `after` are JSON text or null. */
export interface AuditEntry {
  /** Who acted: a person's email, "token", `executor:<name>`, `device:<id>`, or who tried (a failed sign-in); see actorOf. */
  actor: string;
  userId: string | null;
  ip: string | null;
  action: string;
  objectType: string;
  objectId: string | null;
  before: string | null;
  after: string | null;
}

export async function insertAuditEntry(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(`INSERT INTO audit_log (actor, user_id, ip, action, object_type, object_id, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    entry.actor,
    entry.userId,
    entry.ip,
    entry.action,
    entry.objectType,
    entry.objectId,
    entry.before,
    entry.after,
  ]);
}

export interface AuditRow {
  id: string;
  actor: string;
  user_id: string | null;
  ip: string | null;
  action: string;
  object_type: string;
  object_id: string | null;
  before: unknown;
  after: unknown;
  created_at: Date;
}

export interface AuditFilter {
  /** Part of the actor's name. */
  actor?: string;
  /** An action, or a prefix ending in "." (`dispute.`). */
  action?: string;
  objectType?: string;
  objectId?: string;
  from?: Date;
  to?: Date;
  limit: number;
  offset: number;
}

/** The audit log, newest first, with the total matching for paging. */
export async function listAuditEntries(db: Queryable, filter: AuditFilter): Promise<{ rows: AuditRow[]; total: number }> {
  const { rows } = await db.query<AuditRow & { total: string }>(
    `SELECT id, actor, user_id, ip, action, object_type, object_id, before, after, created_at, count(*) OVER () AS total
       FROM audit_log
      WHERE ($1::text IS NULL OR strpos(lower(actor), lower($1)) > 0)
        AND ($2::text IS NULL OR action = $2 OR (right($2, 1) = '.' AND starts_with(action, $2)))
        AND ($3::text IS NULL OR object_type = $3)
        AND ($4::text IS NULL OR object_id = $4)
        AND ($5::timestamptz IS NULL OR created_at >= $5)
        AND ($6::timestamptz IS NULL OR created_at < $6)
      ORDER BY created_at DESC, id DESC LIMIT $7 OFFSET $8`,
    [
      filter.actor ?? null,
      filter.action ?? null,
      filter.objectType ?? null,
      filter.objectId ?? null,
      filter.from ?? null,
      filter.to ?? null,
      filter.limit,
      filter.offset,
    ],
  );
  return { rows, total: Number(rows[0]?.total ?? 0) };
}
