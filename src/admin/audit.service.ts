import type { FastifyRequest } from 'fastify';
import { actorName } from '../auth/actor.js';
import type { Queryable } from '../db/pool.js';
import { type AuditFilter, insertAuditEntry, listAuditEntries } from './audit.repo.js';

/**
 * Writes one action to the audit log: who (the person, or "token" for the bearer ADMIN_TOKEN, and
 * the client address), what, on which object, and the object before → after. Called in the same
 * database transaction as the change when there is one. `as` names who acted when no one is
 * signed in yet (a failed sign-in: the email tried).
 */
export async function audit(
  db: Queryable,
  request: FastifyRequest,
  action: string,
  objectType: string,
  objectId: string | null,
  before: unknown,
  after: unknown,
  as?: string,
): Promise<void> {
  const actor = request.actor;
  await insertAuditEntry(db, {
    actor: as ?? actorName(actor),
    userId: actor?.kind === 'user' ? actor.id : null,
    ip: request.ip,
    action,
    objectType,
    objectId,
    before: jsonOrNull(before),
    after: jsonOrNull(after),
  });
}

function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** The audit log as the operator reads it, newest first, with the total for paging. */
export async function listAudit(db: Queryable, filter: AuditFilter) {
  const { rows, total } = await listAuditEntries(db, filter);
  return {
    entries: rows.map((row) => ({
      id: Number(row.id),
      actor: row.actor,
      user_id: row.user_id,
      ip: row.ip,
      action: row.action,
      object_type: row.object_type,
      object_id: row.object_id,
      before: row.before,
      after: row.after,
      created_at: row.created_at.toISOString(),
    })),
    total,
  };
}
