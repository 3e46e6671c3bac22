import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshStatistics, vacuumChurnedTables } from '../src/db/upkeep.js';
import { startTestService, type TestService, until } from './helpers.js';

/**
 * Upkeep of the service's small tables (src/db/upkeep.ts). Planner statistics of tables that grow
 * from empty: a table is analysed once it has grown to twice its rows (updates do not count), so
 * plans made while it was empty do not stay. Dead rows of tables that churn: a table is vacuumed once they
 * pass 200 plus a fifth of its live rows, so that a walk from the oldest end of an index (the
 * requisites' LRU order) does not cross them.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService({}, { worker: false });
  // Autovacuum must not analyse it behind the test's back.
  await service.ctx.db.query('CREATE TABLE stats_probe (id integer PRIMARY KEY, note text) WITH (autovacuum_enabled = false)');
  await service.ctx.db.query('CREATE TABLE churn_probe (id integer PRIMARY KEY, used_at timestamptz NOT NULL DEFAULT now()) WITH (autovacuum_enabled = false)');
  await service.ctx.db.query('CREATE INDEX churn_probe_lru ON churn_probe (used_at, id)');
});
afterAll(async () => service?.close());

async function lastAnalysed(): Promise<{ analysed: Date | null; tuples: number }> {
  const { rows } = await service.ctx.db.query<{ analysed: Date | null; tuples: number }>(
    `SELECT greatest(s.last_analyze, s.last_autoanalyze) AS analysed, c.reltuples::int AS tuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'stats_probe'`,
  );
  return rows[0]!;
}

/** Runs `sql` and makes this backend report its table statistics at once (PostgreSQL 15+). */
async function reported(sql: string, params: unknown[] = []): Promise<void> {
  const client = await service.ctx.db.connect();
  try {
    await client.query('SELECT pg_stat_force_next_flush()');
    await client.query(sql, params);
  } finally {
    client.release();
  }
}

async function grow(from: number, count: number): Promise<void> {
  await reported(`INSERT INTO stats_probe SELECT g, 'row ' || g FROM generate_series($1::int, $2::int) g`, [from, from + count - 1]);
}

/** Moves every row of churn_probe to the newest end of its index `times` times, as creates move requisites. */
async function churn(times: number): Promise<void> {
  for (let i = 0; i < times; i++) await reported('UPDATE churn_probe SET used_at = clock_timestamp()');
}

async function deadRows(): Promise<{ dead: number; vacuumed: Date | null }> {
  const { rows } = await service.ctx.db.query<{ dead: number; vacuumed: Date | null }>(
    `SELECT n_dead_tup::int AS dead, greatest(last_vacuum, last_autovacuum) AS vacuumed FROM pg_stat_user_tables WHERE relname = 'churn_probe'`,
  );
  return rows[0]!;
}

describe('keeping statistics of growing tables', () => {
  it('leaves a table with few changes alone, analyses it once it has grown past its size, then waits for the next doubling', async () => {
    await grow(1, 10);
    expect(await refreshStatistics(service.ctx.db, service.ctx.log)).not.toContain('stats_probe');
    expect((await lastAnalysed()).analysed).toBeNull();

    await grow(11, 300);
    // The backend's counters reach the statistics system within a moment.
    const analysed = await until(
      async () => ((await refreshStatistics(service.ctx.db, service.ctx.log)).includes('stats_probe') ? true : undefined),
      10_000,
      200,
    );
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

  it("leaves a table whose rows are only updated alone, however many times (balances, the requisites' LRU moves)", async () => {
    const before = await lastAnalysed();
    expect(before.analysed).not.toBeNull();
    // Four times the table's rows in changes, none of them a new row: until 2026-11-28 this
    // analysed it (more changes than rows), as the ledger's accounts were every second under load.
    for (let i = 0; i < 4; i++) await reported(`UPDATE stats_probe SET note = note || '.'`);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await refreshStatistics(service.ctx.db, service.ctx.log)).not.toContain('stats_probe');
    expect((await lastAnalysed()).analysed).toEqual(before.analysed);
  });
});

describe('vacuuming churning tables', () => {
  it('leaves a table with few dead rows alone, vacuums it once they pass 200 plus a fifth of its rows', async () => {
    await reported('INSERT INTO churn_probe (id) SELECT g FROM generate_series(1, 500) g');
    await service.ctx.db.query('VACUUM churn_probe'); // reltuples = 500; the threshold is 200 + 100
    const vacuumedAt = (await deadRows()).vacuumed;

    // 250 dead rows: below 300
    await reported('UPDATE churn_probe SET used_at = clock_timestamp() WHERE id <= 250');
    await until(async () => ((await deadRows()).dead >= 250 ? true : undefined), 10_000, 100);
    expect(await vacuumChurnedTables(service.ctx.db, service.ctx.log)).not.toContain('churn_probe');

    // 750 more: 1,000 dead rows
    await churn(1);
    await reported('UPDATE churn_probe SET used_at = clock_timestamp() WHERE id <= 250');
    await until(async () => ((await deadRows()).dead >= 1000 ? true : undefined), 10_000, 100);
    // Not within a second of its last vacuum (a second per 1,000 rows, at least one).
    const vacuumed = await until(
      async () => ((await vacuumChurnedTables(service.ctx.db, service.ctx.log)).includes('churn_probe') ? true : undefined),
      10_000,
      200,
    );
    expect(vacuumed).toBe(true);
    const after = await deadRows();
    expect(after.dead).toBe(0);
    expect(after.vacuumed!.getTime()).toBeGreaterThan(vacuumedAt!.getTime());

    // The index's oldest end holds live entries only again: a walk from it reads a page or two.
    const { rows } = await service.ctx.db.query<{ 'QUERY PLAN': string }>(
      'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT id FROM churn_probe ORDER BY used_at, id LIMIT 10',
    );
    const buffers = /Buffers: shared hit=(\d+)/.exec(rows.map((r) => r['QUERY PLAN']).join('\n'));
    expect(Number(buffers?.[1] ?? 0)).toBeLessThanOrEqual(4);
  });
});
