import type { Queryable } from '../db/pool.js';

/** One line of the audit log; `before` and `after` are JSON text or null. */
export interface AuditEntry {
  actor: string;
  action: string;
  objectType: string;
  objectId: string | null;
  before: string | null;
  after: string | null;
}

export async function insertAuditEntry(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(`INSERT INTO audit_log (actor, action, object_type, object_id, before, after) VALUES ($1, $2, $3, $4, $5, $6)`, [
    entry.actor,
    entry.action,
    entry.objectType,
    entry.objectId,
    entry.before,
    entry.after,
  ]);
}
