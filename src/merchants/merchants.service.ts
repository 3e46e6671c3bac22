import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { randomToken } from '../lib/crypto.js';
import * as repo from './merchants.repo.js';

/** A new Secret Key: shown once to the operator, stored sealed (it must be usable to check HMACs). */
function newSecretKey(): string {
  return randomToken('sk_', 32);
}

/** Creates a merchant with its first Secret Key, audited in the same transaction. */
export async function createMerchant(
  ctx: AppContext,
  name: string,
  record: AuditRecorder,
): Promise<{ id: string; name: string; secret_key: string; created_at: Date }> {
  const secretKey = newSecretKey();
  const merchant = await transaction(ctx.db, async (tx) => {
    const row = await repo.insertMerchant(tx, name);
    await repo.insertSecret(tx, row.id, ctx.box.seal(secretKey));
    await record(tx, 'merchant.create', 'merchant', row.id, null, { id: row.id, name });
    return row;
  });
  return { ...merchant, secret_key: secretKey };
}

export async function getMerchant(ctx: AppContext, id: string): Promise<repo.MerchantRow> {
  const merchant = await repo.findMerchant(ctx.db, id);
  if (!merchant) throw new DomainError('NOT_FOUND', `Merchant ${id} not found`);
  return merchant;
}

/**
 * Issues a new Secret Key. The old one keeps signing for `graceSeconds` so the merchant can
 * switch without downtime (DESIGN.md decision 2).
 */
export async function rotateSecret(
  ctx: AppContext,
  merchantId: string,
  graceSeconds: number,
  record: AuditRecorder,
): Promise<{ secret_key: string; previous_valid_until: Date }> {
  await getMerchant(ctx, merchantId);
  const secretKey = newSecretKey();
  const previousValidUntil = await transaction(ctx.db, async (tx) => {
    const until = await repo.expireSecrets(tx, merchantId, graceSeconds);
    await repo.insertSecret(tx, merchantId, ctx.box.seal(secretKey));
    await record(tx, 'merchant.rotate_secret', 'merchant', merchantId, null, { previous_valid_until: until });
    return until;
  });
  return { secret_key: secretKey, previous_valid_until: previousValidUntil };
}

export const listMerchants = (ctx: AppContext) => repo.listMerchants(ctx.db);
