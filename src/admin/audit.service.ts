import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.js';
import { type Actor, actorName } from '../lib/actor.js';
import { type AuditFilter, insertAuditEntry, listAuditEntries } from './audit.repo.js';

/**
 * Writes one audit row for whoever acts in a request; a service that changes state takes one and
 * calls it inside the transaction of its change, so that no change commits without its row.
 */
export type AuditRecorder = (db: Queryable, action: string, objectType: string, objectId: string | null, before: unknown, after: unknown) => Promise<void>;

/** The recorder of `request`'s actor (see `audit`). */
export function auditFor(request: FastifyRequest): AuditRecorder {
  return (db, action, objectType, objectId, before, after) => audit(db, request, action, objectType, objectId, before, after);
}

/**
 * The recorder of an actor outside any request: the service itself (`system:<what>`, e.g. a
 * deadline job) or a party named by its id (`merchant:<id>` for a merchant's API key).
 */
export function systemAudit(actor: string): AuditRecorder {
  return (db, action, objectType, objectId, before, after) =>
    insertAuditEntry(db, { actor, userId: null, ip: null, action, objectType, objectId, before: jsonOrNull(before), after: jsonOrNull(after) });
}

/**
 * Who acts in a request: a signed-in person (staff, an executor's or a merchant's person in their
 * cabinet) or the bearer ADMIN_TOKEN as the access check resolved them, else an executor's apps
 * (its bearer token) or a phone (device token).
 */
export function requestActor(request: FastifyRequest): Actor | undefined {
  if (request.actor) return request.actor;
  if (request.executor) return { kind: 'executor', id: request.executor.id, name: request.executor.name };
  if (request.device) return { kind: 'device', id: request.device.id, executorId: request.device.executor_id };
  return undefined;
}

/** Who acts in a request, as the audit log names them (`actorName`): by email, "token", `executor:<name>`, `device:<id>`. */
export function actorOf(request: FastifyRequest): { name: string; userId: string | null } {
  const actor = requestActor(request);
  return { name: actorName(actor), userId: actor?.kind === 'user' ? actor.id : null };
}

/** Who acts, as an audit row names them: `actorOf` and the client address. */
export interface AuditActor {
  name: string;
  userId: string | null;
  ip: string | null;
}

/** Who acts in `request`, for an audit row written with the change in one statement (the executors' notifications, issue 38). */
export function auditActorOf(request: FastifyRequest): AuditActor {
  return { ...actorOf(request), ip: request.ip };
}

/** The recorder of an `AuditActor`: the rows `auditFor` writes for the request it was taken from. */
export function auditAs(actor: AuditActor): AuditRecorder {
  return (db, action, objectType, objectId, before, after) =>
    insertAuditEntry(db, {
      actor: actor.name,
      userId: actor.userId,
      ip: actor.ip,
      action,
      objectType,
      objectId,
      before: jsonOrNull(before),
      after: jsonOrNull(after),
    });
}

/**
 * Writes one action to the audit log: who (see `actorOf`, and the client address), what, on which
 * object, and the object before → after. Called in the same database transaction as the change
 * when there is one. `as` names who acted when no one is signed in yet: a failed sign-in's email
 * tried, or the person whose sign-in starts in this transaction (with their user id).
 */
export async function audit(
  db: Queryable,
  request: FastifyRequest,
  action: string,
  objectType: string,
  objectId: string | null,
  before: unknown,
  after: unknown,
  as?: string | { name: string; userId: string },
): Promise<void> {
  const who = as === undefined ? actorOf(request) : typeof as === 'string' ? { name: as, userId: actorOf(request).userId } : as;
  await insertAuditEntry(db, {
    actor: who.name,
    userId: who.userId,
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
