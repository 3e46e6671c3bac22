import type { Queryable } from '../db/pool.js';

/** Whether each thing a first payment needs exists yet (one row, one boolean each). */
export interface FirstStepsRow {
  rate: boolean;
  merchant: boolean;
  terminal: boolean;
  executor: boolean;
  deposit: boolean;
  requisite: boolean;
  phone: boolean;
}

/**
 * What a first payment needs, read from the tables themselves: a rate, a merchant with a terminal
 * that is on, an executor that is on with money on its deposit (the ledger's available account), an
 * active requisite, and a phone registered (not revoked) to report the bank's messages.
 */
export async function readFirstSteps(db: Queryable): Promise<FirstStepsRow> {
  const { rows } = await db.query<FirstStepsRow>(
    `SELECT EXISTS (SELECT 1 FROM rates) AS rate,
            EXISTS (SELECT 1 FROM merchants) AS merchant,
            EXISTS (SELECT 1 FROM terminals WHERE is_active) AS terminal,
            EXISTS (SELECT 1 FROM executors WHERE is_active) AS executor,
            EXISTS (SELECT 1 FROM ledger_accounts a JOIN executors e ON e.id = a.executor_id
                     WHERE a.kind = 'executor_available' AND a.balance > 0 AND e.is_active) AS deposit,
            EXISTS (SELECT 1 FROM requisites WHERE is_active) AS requisite,
            EXISTS (SELECT 1 FROM devices WHERE revoked_at IS NULL) AS phone`,
  );
  return rows[0]!;
}
