import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import * as repo from './flags.repo.js';

/** A flag as the operator API answers it (the dispute card's `risk_flags`, the settle answer). */
export function toFlag(row: repo.RiskFlagRow) {
  return {
    id: row.id,
    rule: row.rule,
    action: row.action,
    figure: row.figure,
    inputs: row.inputs,
    payment_id: row.payment_id,
    dispute_id: row.dispute_id,
    created_at: row.created_at,
    settled_at: row.settled_at,
    settled_by: row.settled_by,
    settle_comment: row.settle_comment,
  };
}

/** A flag as a card lists it (RiskFlagSummary). */
export function toFlagSummary(row: repo.RiskFlagRow) {
  return {
    id: row.id,
    rule: row.rule,
    figure: row.figure,
    dispute_id: row.dispute_id,
    created_at: row.created_at,
    settled_at: row.settled_at,
    settled_by: row.settled_by,
  };
}

/**
 * A person settles a flag (issue 36 item 4: a flag waits for a person, and never decides alone):
 * it stays in the record with who settled it, when and why, and the payment or dispute it was on
 * is not changed by settling. Settling a settled flag answers it as it is (the first settle's
 * person and comment) and writes nothing; a refusal is settled when made and is not a flag.
 */
export async function settleFlag(ctx: AppContext, id: string, by: string, comment: string | null, record: AuditRecorder): Promise<repo.RiskFlagRow> {
  return transaction(ctx.db, async (tx) => {
    const before = isUuid(id) ? await repo.findHit(tx, id) : undefined;
    if (!before) throw new DomainError('NOT_FOUND', `Risk hit ${id} not found`);
    if (before.action !== 'flagged') throw new DomainError('CONFLICT', 'This hit is a refusal, settled when it was made; only a flag is settled by a person');
    const settled = await repo.settleFlag(tx, before.id, by, comment);
    // Settled already (or a racing settle won): its row is the answer, unchanged.
    if (!settled) return (await repo.findHit(tx, before.id))!;
    await record(
      tx,
      'risk.flag_settle',
      'risk_hit',
      settled.id,
      { settled_at: null, rule: before.rule, payment_id: before.payment_id, dispute_id: before.dispute_id },
      { settled_at: settled.settled_at, settled_by: settled.settled_by, comment },
    );
    return settled;
  });
}
