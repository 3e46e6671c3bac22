import { prepared, type Queryable } from '../db/pool.js';

export interface RateRow {
  currency: string;
  rate: string;
  updated_at: Date;
}

export async function upsertRate(db: Queryable, currency: string, rate: string): Promise<RateRow> {
  const { rows } = await db.query<RateRow>(
    `INSERT INTO rates (currency, rate) VALUES ($1, $2)
     ON CONFLICT (currency) DO UPDATE SET rate = EXCLUDED.rate, updated_at = now()
     RETURNING currency, rate, updated_at`,
    [currency, rate],
  );
  return rows[0]!;
}

export async function listRates(db: Queryable): Promise<RateRow[]> {
  const { rows } = await db.query<RateRow>('SELECT currency, rate, updated_at FROM rates ORDER BY currency');
  return rows;
}

export async function upsertTerminalRate(db: Queryable, terminalId: string, currency: string, rate: string): Promise<RateRow> {
  const { rows } = await db.query<RateRow>(
    `INSERT INTO terminal_rates (terminal_id, currency, rate) VALUES ($1, $2, $3)
     ON CONFLICT (terminal_id, currency) DO UPDATE SET rate = EXCLUDED.rate, updated_at = now()
     RETURNING currency, rate, updated_at`,
    [terminalId, currency, rate],
  );
  return rows[0]!;
}

export async function deleteTerminalRate(db: Queryable, terminalId: string, currency: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM terminal_rates WHERE terminal_id = $1 AND currency = $2', [terminalId, currency]);
  return (rowCount ?? 0) > 0;
}

export async function listTerminalRates(db: Queryable, terminalId: string): Promise<RateRow[]> {
  const { rows } = await db.query<RateRow>('SELECT currency, rate, updated_at FROM terminal_rates WHERE terminal_id = $1 ORDER BY currency', [terminalId]);
  return rows;
}

/**
 * The rate of each currency as the terminal sees it: its own rate where the operator set one,
 * otherwise the manual rate. `currencies` null means every currency that has a rate.
 */
export async function effectiveRates(db: Queryable, terminalId: string, currencies: string[] | null): Promise<Map<string, string>> {
  const { rows } = await db.query<{ currency: string; rate: string }>(
    prepared(effectiveRatesSql('$1', currencies ? '$2' : null), currencies ? [terminalId, currencies] : [terminalId]),
  );
  return new Map(rows.map((row) => [row.currency, row.rate]));
}

/**
 * effectiveRates as SQL (rows: currency, rate as text) over the given placeholders: a terminal id,
 * and a text[] of currencies or null for every currency.
 */
export function effectiveRatesSql(terminalId: string, currencies: string | null): string {
  // Two statements rather than `$2 IS NULL OR …`: each then runs on one cached generic plan,
  // where the combined one was planned again on every call (a payment create makes this call).
  return `SELECT r.currency, coalesce(tr.rate, r.rate)::text AS rate
            FROM rates r LEFT JOIN terminal_rates tr ON tr.terminal_id = ${terminalId} AND tr.currency = r.currency
           ${currencies ? `WHERE r.currency = ANY(${currencies}::text[])` : ''}
          UNION ALL
          SELECT tr.currency, tr.rate::text FROM terminal_rates tr
           WHERE tr.terminal_id = ${terminalId} ${currencies ? `AND tr.currency = ANY(${currencies}::text[])` : ''}
             AND NOT EXISTS (SELECT 1 FROM rates r WHERE r.currency = tr.currency)`;
}
