-- The dashboard's window rolled up (issue 38: GET /admin/v1/dashboard with a p95 well below 200 ms
-- at 10^7 payments). The dashboard read every payment of its window, terminal by terminal, a row
-- of the table each: the day's 50,000 payments cost 150–200 ms, 60 % of it reading them.
--
-- Instead the payments created before `upto` are kept summed per minute of creation (and per hour,
-- from the minutes), per terminal ('t') and per executor ('e') and currency, with the minute's
-- totals for the series ('s'); the completed ones' times to complete are kept whole (`seconds`),
-- so that the medians stay exact. The dashboard reads these rows for the part of its window before
-- `upto` and the payments themselves after it (src/reports/dashboard.rollup.ts).
--
-- "Completed" is the payment's status now, and a payment may complete (or be approved in a
-- dispute) long after its minute was summed: a row counts the completions made before `upto`
-- (completed_at is the completing transaction's start), and the dashboard adds those made since,
-- found by their pay-in's posting (ledger_transactions_created). Each roll-up sums again the
-- minutes that gained a payment or a completion since the previous one, then their hours.
--
-- `upto` is an instant before which every transaction that could still create or complete a
-- payment has ended (the oldest open transaction's start, as ledger_account_totals' upto,
-- migration 056), so no payment can appear or complete behind it later. Nothing is written by a
-- create or a completion: the roll-up reads what they left (a job every minute, and the dashboard
-- itself before it reads).
--
-- New, empty tables: nothing to lock for long; the previous release never reads them.
CREATE TABLE dashboard_rollup (
  -- 'minute' or 'hour' (UTC), the unit `at` starts.
  level text NOT NULL CHECK (level IN ('minute', 'hour')),
  at timestamptz NOT NULL,
  -- 's' the minute's totals (minutes only: the series), 't' per terminal, 'e' per executor.
  kind text NOT NULL CHECK (kind IN ('s', 't', 'e')),
  -- The terminal or the executor; NULL for 's'.
  key uuid,
  -- The order currency; '' for 's'.
  currency text NOT NULL,
  created integer NOT NULL,
  completed integer NOT NULL,
  -- received_amount summed over the completed ones; NULL when none (as sum() gives it).
  received numeric,
  -- extract(epoch FROM completed_at - created_at) of each completed one, in no order.
  seconds float8[] NOT NULL DEFAULT '{}'
);
CREATE INDEX dashboard_rollup_unit ON dashboard_rollup (level, at);

-- One row: the roll-up covers the payments created in [covered_from, upto), both whole UTC hours
-- for covered_from.
CREATE TABLE dashboard_rollup_state (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  covered_from timestamptz NOT NULL,
  upto timestamptz NOT NULL
);

-- The hours' times to complete from their minutes'.
CREATE AGGREGATE dashboard_seconds_cat(float8[]) (SFUNC = array_cat, STYPE = float8[], INITCOND = '{}');
