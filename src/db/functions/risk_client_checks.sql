-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).

-- Kept for the previous release only (expand, then contract: docs/operations.md "Upgrades"): this
-- release counts the client_id window in the create's own transaction (payment_creation_facts,
-- migration 057) and looks blocks up from memory (src/risk/rules.ts); nothing here calls this. A
-- later release drops it, with the client_id rows of risk_velocity.
--
-- risk_client_checks: the client_id rules of several payment creates in one statement and one
-- transaction (src/risk/client-checks.ts; issue 36, "cheap enough that npm run bench with rules on
-- keeps its ratio"). For each create n: the first block that holds now for its keyed hash
-- p_block_hash[n] (null: no block look-up), here (p_merchant[n]) or everywhere; and, only when
-- nothing blocks it and p_key[n] is given, its entry (p_id[n], p_amount[n]) counted in the sliding
-- window of p_window[n] seconds of risk_velocity row ('client_id', p_key[n]) if that keeps the
-- window within p_max_payments[n] entries and p_max_amount[n] in sum (migration 047: one upsert
-- that prunes what left the window and adds the entry only while under the limit).
--
-- Exact under races, across instances: every later count of a key waits for the row lock of the
-- earlier one, to the end of its transaction. Within the statement, creates are counted in the
-- order of their keys (and of their places for one key), each in a statement of its own that sees
-- the ones before it: two batches lock their rows in the same order, so they cannot wait for each
-- other.
--
-- Committed without waiting for its WAL to reach the disk (synchronous_commit off for this
-- transaction only): a count exists to stop payments, and the payment it is counted for commits
-- later, in a transaction of its own that does wait — which flushes the WAL up to its own commit,
-- so up to this one's, written before it. A payment that survives a crash has its count with it;
-- a count lost with a crash belongs to a create that never answered 200.
CREATE OR REPLACE FUNCTION risk_client_checks(
  p_block_hash text[], p_merchant uuid[], p_key text[], p_amount numeric[], p_id uuid[],
  p_window integer[], p_max_payments integer[], p_max_amount numeric[])
RETURNS TABLE (item integer, block_id uuid, counted boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
  wrote boolean := false;
BEGIN
  FOR n IN SELECT k.ord FROM unnest(p_key) WITH ORDINALITY AS k(key, ord) ORDER BY k.key NULLS LAST, k.ord LOOP
    item := n;
    block_id := NULL;
    counted := false;
    IF p_block_hash[n] IS NOT NULL THEN
      SELECT b.id INTO block_id FROM risk_blocks b
       WHERE b.kind = 'client_id' AND b.value_hash = p_block_hash[n] AND (b.merchant_id IS NULL OR b.merchant_id = p_merchant[n])
         AND b.removed_at IS NULL AND (b.expires_at IS NULL OR b.expires_at > now())
       ORDER BY b.created_at LIMIT 1;
    END IF;
    IF block_id IS NULL AND p_key[n] IS NOT NULL AND (p_max_amount[n] IS NULL OR p_amount[n] <= p_max_amount[n]) THEN
      INSERT INTO risk_velocity AS v (scope, key, ats, amounts, ids)
      VALUES ('client_id', p_key[n], ARRAY[now()], ARRAY[p_amount[n]], ARRAY[p_id[n]])
      ON CONFLICT (scope, key) DO UPDATE SET
        ats = ARRAY(SELECT e.at FROM unnest(v.ats, v.amounts, v.ids) WITH ORDINALITY AS e(at, amount, id, o)
                     WHERE e.at > now() - make_interval(secs => p_window[n]) ORDER BY e.o) || now(),
        amounts = ARRAY(SELECT e.amount FROM unnest(v.ats, v.amounts, v.ids) WITH ORDINALITY AS e(at, amount, id, o)
                         WHERE e.at > now() - make_interval(secs => p_window[n]) ORDER BY e.o) || p_amount[n],
        ids = ARRAY(SELECT e.id FROM unnest(v.ats, v.amounts, v.ids) WITH ORDINALITY AS e(at, amount, id, o)
                     WHERE e.at > now() - make_interval(secs => p_window[n]) ORDER BY e.o) || p_id[n]
      WHERE (p_max_payments[n] IS NULL
             OR (SELECT count(*) FROM unnest(v.ats) AS e(at) WHERE e.at > now() - make_interval(secs => p_window[n])) < p_max_payments[n])
        AND (p_max_amount[n] IS NULL
             OR (SELECT coalesce(sum(e.amount), 0) FROM unnest(v.ats, v.amounts) AS e(at, amount)
                  WHERE e.at > now() - make_interval(secs => p_window[n])) + p_amount[n] <= p_max_amount[n]);
      counted := FOUND;
      wrote := wrote OR counted;
    END IF;
    RETURN NEXT;
  END LOOP;
  IF wrote THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
END
$$;
