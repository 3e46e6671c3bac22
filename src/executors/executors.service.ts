import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { hashToken, randomToken } from '../lib/crypto.js';
import * as repo from './executors.repo.js';

/** An executor as the operator API shows it. */
export function toExecutor(row: repo.ExecutorRow): repo.ExecutorRow {
  return { id: row.id, name: row.name, is_active: row.is_active, created_at: row.created_at };
}

/** Creates an executor; its bearer token is returned once and stored as a hash. */
export async function createExecutor(ctx: AppContext, name: string): Promise<repo.ExecutorRow & { token: string }> {
  const token = randomToken('ex_', 32);
  const executor = await repo.insertExecutor(ctx.db, name, hashToken(token));
  return { ...executor, token };
}

export async function getExecutor(ctx: AppContext, id: string): Promise<repo.ExecutorRow> {
  const executor = await repo.findExecutor(ctx.db, id);
  if (!executor) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
  return executor;
}

export async function updateExecutor(ctx: AppContext, id: string, patch: { name?: string; is_active?: boolean }) {
  const before = await getExecutor(ctx, id);
  const after = await repo.updateExecutor(ctx.db, id, { name: patch.name, isActive: patch.is_active });
  if (!after) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
  return { before, after };
}

/** Replaces an executor's token at once (a lost phone must stop working immediately). */
export async function rotateExecutorToken(ctx: AppContext, id: string): Promise<{ token: string }> {
  const token = randomToken('ex_', 32);
  if (!(await repo.replaceToken(ctx.db, id, hashToken(token)))) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
  return { token };
}

export const listExecutors = (ctx: AppContext) => repo.listExecutors(ctx.db);
