import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { checkLedgerByJob } from './ledger.service.js';
import { rollUpSystemTotals } from './system-totals.js';

/** The graphile-worker task of the hourly ledger check. */
export const LEDGER_CHECK_TASK = 'ledger_check';

/**
 * Every hour, the ledger check the operator can also run (GET /admin/v1/ledger/check): its outcome
 * is kept for /metrics (kassir_ledger_check_*), so that a broken invariant raises an alert within
 * the hour rather than when someone next looks. The job key makes it one run across all instances.
 * Hourly it reads what was written since its previous run; at 03:41 UTC the whole ledger, in
 * pieces with pauses, its progress in the log (checkLedgerByJob).
 */
export function ledgerCheckTask(ctx: AppContext): Task {
  return async () => {
    // The whole check's progress, at most every 10 s: it runs for minutes at 10^7 payments.
    let logged = 0;
    let pieces = 0;
    let rows = 0;
    const result = await checkLedgerByJob(ctx.db, new Date(), {
      onPiece: (piece) => {
        pieces += 1;
        rows += piece.rows;
        if (Date.now() - logged < 10_000) return;
        logged = Date.now();
        ctx.log.info({ table: piece.table, from: piece.from, pieces, rows }, 'the whole ledger check goes on');
      },
    });
    if (!result.ok) ctx.log.error({ problems: result.problems, since: result.since }, 'the ledger check found problems');
  };
}

/** The graphile-worker task that rolls the system accounts' entries up (migration 056). */
export const LEDGER_TOTALS_TASK = 'ledger_totals';

/** Every minute: the system accounts' totals move on to the oldest open transaction's start (system-totals.ts). */
export function ledgerTotalsTask(ctx: AppContext): Task {
  return async () => {
    await rollUpSystemTotals(ctx.db);
  };
}
