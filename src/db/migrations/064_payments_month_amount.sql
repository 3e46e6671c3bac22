-- kassir:no-transaction
--
-- The console's search by an exact amount (GET /admin/v1/payments?q=1500) on an index whose new
-- entries land together (issue 38, "History at 10^7 rows"): migration 030's payments_amount
-- (amount) put each create's entry on a random leaf, the amount being a random key by nature —
-- at 10^7 payments a read from disk for nearly every create, and a full-page image after every
-- checkpoint, while the batch the create is in waits for it. Its place is taken by (the payment's
-- UTC month, amount): a create's entry goes into the current month's part, a small part of the
-- index that stays cached; the search probes each month from the oldest payment's (or from's) to
-- the newest's (or to's) — one index descent a month (src/payments/payments.repo.ts,
-- searchMatches). The month is spelled as the search spells it: date_trunc('month', created_at AT
-- TIME ZONE 'UTC'), both functions IMMUTABLE (timezone(text, timestamptz) and date_trunc(text,
-- timestamp), on PostgreSQL 15 to 18), so the index's key does not depend on the session's
-- TimeZone.
--
-- Built CONCURRENTLY (creates go on while it is built), migration 030's index dropped the same
-- way once the new one is there. A build a crash left invalid is dropped and made again: every
-- statement here may run again.
--
-- The previous release (still running beside this one during a rolling upgrade:
-- docs/operations.md "Upgrades") searches by amount with `x.amount = $n` alone: on the migrated
-- schema its search reads the payments table instead of an index — the same answers, slower on a
-- big table (a second or so at 10^7 payments) until its instances are replaced. Nothing else of
-- either release reads payments_amount.

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('payments_month_amount') AND NOT indisvalid) THEN
    DROP INDEX payments_month_amount;
  END IF;
END
$$;

CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_month_amount ON payments ((date_trunc('month', created_at AT TIME ZONE 'UTC')), amount);

DROP INDEX CONCURRENTLY IF EXISTS payments_amount;
