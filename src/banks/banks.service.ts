import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Queryable, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { BankRow } from './banks.repo.js';
import * as repo from './banks.repo.js';

// Russian collation (spec: "sorted by name"; the names are Russian): Ё sorts with Е, Latin
// brand names after Cyrillic ones as a Russian reader expects. ICU in Node, not the database's
// collation, so the order is the same on every PostgreSQL build.
const russian = new Intl.Collator('ru', { sensitivity: 'base', numeric: true });

function sortByRussianName<T extends { name: string }>(banks: T[]): T[] {
  return [...banks].sort((a, b) => russian.compare(a.name, b.name));
}

/** The public directory: active entries only, sorted by name. */
export async function publicDirectory(ctx: AppContext): Promise<{ code: string; name: string }[]> {
  const banks = await repo.listBanks(ctx.db, true);
  return sortByRussianName(banks).map((bank) => ({ code: bank.code, name: bank.name }));
}

export async function listAllBanks(ctx: AppContext): Promise<BankRow[]> {
  return sortByRussianName(await repo.listBanks(ctx.db, false));
}

/** Adds a directory entry, audited in the same transaction. */
export async function createBank(ctx: AppContext, bank: Parameters<typeof repo.insertBank>[1], record: AuditRecorder): Promise<BankRow> {
  return transaction(ctx.db, async (tx) => {
    const row = await repo.insertBank(tx, bank);
    await record(tx, 'bank.create', 'bank', row.code, null, row);
    return row;
  });
}

/** Changes a directory entry; `before` is read under the entry's lock and audited with the change. */
export async function updateBank(ctx: AppContext, code: string, patch: Parameters<typeof repo.updateBank>[2], record: AuditRecorder): Promise<BankRow> {
  return transaction(ctx.db, async (tx) => {
    const before = await repo.findBank(tx, code, true);
    if (!before) throw new DomainError('NOT_FOUND', `Bank ${code} not found`);
    await checkOperator(tx, code, before, patch);
    const after = (await repo.updateBank(tx, code, patch))!;
    await record(tx, 'bank.update', 'bank', after.code, before, after);
    return after;
  });
}

/** A bank's `operator_code`, when set, names a mobile operator of its country in the directory. */
async function checkOperator(db: Queryable, code: string, before: BankRow, patch: Parameters<typeof repo.updateBank>[2]): Promise<void> {
  if (patch.operator_code) {
    const operator = await repo.findBank(db, patch.operator_code);
    const kind = patch.kind ?? before.kind;
    const country = patch.country ?? before.country;
    if (kind !== 'bank')
      throw new DomainError('VALIDATION', `operator_code is for a bank code that also names a mobile operator; ${code} is an operator itself`);
    if (operator?.kind !== 'operator' || operator.country !== country) {
      throw new DomainError('VALIDATION', `operator_code must be a mobile operator of ${country} in the directory; ${patch.operator_code} is not`, {
        operator_code: patch.operator_code,
      });
    }
  }
}
