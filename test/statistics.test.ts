import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshStatistics } from '../src/db/statistics.js';
import { startTestService, until, type TestService } from './helpers.js';

/**
 * Planner statistics of tables that grow from empty (src/db/statistics.ts): a table is analysed
 * once it has seen more changes than it had rows, so plans made while it was empty do not stay.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { worker: false });
  // Autovacuum must not analyse it behind the test's back.
  await service.ctx.db.query('CREATE TABLE stats_probe (id integer PRIMARY KEY, note text) WITH (autovacuum_enabled = false)');
});
afterAll(async () => service?.close());

async function lastAnalysed(): Promise<{ analysed: Date | null; tuples: number }> {
  const { rows } = await service.ctx.db.query<{ analysed: Date | null; tuples: number }>(
    `SELECT greatest(s.last_analyze, s.last_autoanalyze) AS analysed, c.reltuples::int AS tuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'stats_probe'`,
  );
  return rows[0]!;
}

/** Inserts rows and makes this backend report its table statistics at once (PostgreSQL 15+). */
async function grow(from: number, count: number): Promise<void> {
  const client = await service.ctx.db.connect();
  try {
    await client.query('SELECT pg_stat_force_next_flush()');
    await client.query(`INSERT INTO stats_probe SELECT g, 'row ' || g FROM generate_series($1::int, $2::int) g`, [from, from + count - 1]);
  } finally {
    client.release();
  }
}

describe('keeping statistics of growing tables', () => {
  it('leaves a table with few changes alone, analyses it once it has grown past its size, then waits for the next doubling', async () => {
    await grow(1, 10);
    expect(await refreshStatistics(service.ctx.db, service.ctx.log)).not.toContain('stats_probe');
    expect((await lastAnalysed()).analysed).toBeNull();

    await grow(11, 300);
    // The backend's counters reach the statistics system within a moment.
    const analysed = await until(async () => ((await refreshStatistics(service.ctx.db, service.ctx.log)).includes('stats_probe') ? true : undefined), 10_000, 200);
    expect(analysed).toBe(true);
    const first = await lastAnalysed();
    expect(first.analysed).not.toBeNull();
    expect(first.tuples).toBe(310);

    // 100 more rows on 310: not yet a doubling.
    await grow(311, 100);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await refreshStatistics(service.ctx.db, service.ctx.log)).not.toContain('stats_probe');
    expect((await lastAnalysed()).tuples).toBe(310);
  });
});
