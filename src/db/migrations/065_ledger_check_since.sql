-- The hourly ledger check reads what changed since its previous run, not all of history (issue 38;
-- docs/performance.md "The hourly ledger check since its last run").
--
-- Until now every hourly run (the ledger_check job, minute 41) summed every ledger transaction's
-- entries, every account's entries and every payment's credits: at 10^7 payments 2 · 10^7
-- transactions and 4.4 · 10^7 entries, gigabytes an hour, growing for ever. Now the job checks, at
-- most runs, the rows written since `upto`, and keeps here what that needs of the rows before it:
--
-- ledger_check_totals: each account's sum of the entries of the ledger transactions created before
-- the watermark's `upto` (every account: terminals', executors' and the system's). "Balance equals
-- entries" is then the kept total plus the entries since, and "the ledger sums to zero" the sum of
-- the totals plus the entries since. Sound because entries are append-only (migration 001's
-- ledger_entries_append_only refuses UPDATE and DELETE) and every posting's entries carry its
-- transaction's start, as the transaction row does (the columns' default, now()); `upto` is an
-- instant before which no transaction that could still write was open (src/ledger/system-totals.ts),
-- so no entry appears behind it later.
--
-- ledger_check_watermark: one row, `upto` and when the totals were last summed from every entry
-- (`whole_at`: the daily whole run, 03:41 UTC, sums them again from scratch).
--
-- Two new, empty tables: nothing is locked for long. The previous release neither reads nor writes
-- them; until the new job's first run (a whole check that fills them) nothing depends on them.
CREATE TABLE IF NOT EXISTS ledger_check_totals (
  account_id uuid PRIMARY KEY REFERENCES ledger_accounts (id),
  total      numeric(38, 6) NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger_check_watermark (
  one      boolean PRIMARY KEY DEFAULT true CHECK (one),
  upto     timestamptz NOT NULL,
  whole_at timestamptz NOT NULL
);
