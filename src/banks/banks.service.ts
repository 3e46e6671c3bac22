import type { AppContext } from '../context.js';
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

export async function createBank(ctx: AppContext, bank: Parameters<typeof repo.insertBank>[1]): Promise<BankRow> {
  return repo.insertBank(ctx.db, bank);
}

export async function updateBank(ctx: AppContext, code: string, patch: Parameters<typeof repo.updateBank>[2]): Promise<{ before: BankRow; after: BankRow }> {
  const before = await repo.findBank(ctx.db, code);
  if (!before) throw new DomainError('NOT_FOUND', `Bank ${code} not found`);
  if (patch.operator_code) {
    const operator = await repo.findBank(ctx.db, patch.operator_code);
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
  const after = await repo.updateBank(ctx.db, code, patch);
  if (!after) throw new DomainError('NOT_FOUND', `Bank ${code} not found`);
  return { before, after };
}
