import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.js';
import { insertAuditEntry } from './audit.repo.js';

/**
 * Writes one operator action to the audit log: who (the operator credential and the client
 * address), what, on which object, and the object before → after. Called in the same database
 * transaction as the change when there is one.
 */
export async function audit(
  db: Queryable,
  request: FastifyRequest,
  action: string,
  objectType: string,
  objectId: string | null,
  before: unknown,
  after: unknown,
): Promise<void> {
  await insertAuditEntry(db, {
    actor: `${request.operator ?? 'operator'}@${request.ip}`,
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
