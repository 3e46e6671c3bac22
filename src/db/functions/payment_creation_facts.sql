-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature (as 038 did) and the new text goes here.

-- payment_creation_lock_key: the current text (was last written by migration 034_payment_create_batches.sql).
-- The key of the terminal-and-amount lock, in one place for the lock and its try.
CREATE OR REPLACE FUNCTION payment_creation_lock_key(p_terminal uuid, p_amount numeric) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT hashtextextended(p_terminal::text || ':' || p_amount::text, 7461)
$$;

-- payment_client_lock_key: the key of the lock a payer's client_id velocity window is counted
-- under (migration 057): one window per merchant, client_id and order currency (amounts add up in
-- the currency they are in). A collision of two keys only makes their creates take turns.
CREATE OR REPLACE FUNCTION payment_client_lock_key(p_merchant uuid, p_client_id text, p_currency text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT hashtextextended(p_merchant::text || ':' || p_currency || ':' || p_client_id, 7462)
$$;

-- payment_creation_facts: the current text (migration 057 changed its signature; before, migration 034).
-- The facts every route of a create checks, read under the terminal-and-amount lock (held to the end
-- of the transaction), each on a snapshot taken after it, so they are exact: the PENDING payments of
-- this terminal, amount and currency; whether the merchant has a payment with this ext_id.
--
-- And the payer's client_id velocity (DESIGN.md "Risk rules (contract)"; issue 36), when a limit is
-- given (p_client_window seconds, at most p_client_max_count payments and/or p_client_max_amount in
-- sum): the merchant's payments with this client_id in this currency created in the window, counted
-- under the payer's lock (payment_client_lock_key), which every create of that payer takes after its
-- terminal-and-amount lock and holds to its commit. The window is the payments themselves: a create
-- refused, or one that found no requisite, left nothing in it; two creates of one payer, on any
-- instance, are counted one after the other, so exactly the limit gets through. client_refused when
-- this create would take the window past the limit; client_count and client_sum are what the window
-- held before it (the refusal's figure). Null without a limit (nothing counted, no lock).
CREATE OR REPLACE FUNCTION payment_creation_facts(
  p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_currency text,
  p_client_id text, p_client_window integer, p_client_max_count integer, p_client_max_amount numeric)
RETURNS TABLE (same_amount integer, ext_id_taken boolean, client_count integer, client_sum numeric, client_refused boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(payment_creation_lock_key(p_terminal, p_amount));
  client_count := NULL;
  client_sum := NULL;
  client_refused := false;
  IF p_client_id IS NOT NULL AND p_client_window IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(payment_client_lock_key(p_merchant, p_client_id, p_currency));
    SELECT count(*)::integer, coalesce(sum(p.amount), 0) INTO client_count, client_sum
      FROM payments p
     WHERE p.client_id = p_client_id AND p.created_at > now() - make_interval(secs => p_client_window)
       AND p.merchant_id = p_merchant AND p.currency = p_currency;
    client_refused := (p_client_max_count IS NOT NULL AND client_count >= p_client_max_count)
                   OR (p_client_max_amount IS NOT NULL AND client_sum + p_amount > p_client_max_amount);
  END IF;
  SELECT (SELECT count(*)::integer FROM payments p
           WHERE p.terminal_id = p_terminal AND p.status = 'PENDING' AND p.amount = p_amount AND p.currency = p_currency),
         EXISTS (SELECT 1 FROM payments p WHERE p.merchant_id = p_merchant AND p.ext_id = p_ext_id)
    INTO same_amount, ext_id_taken;
  RETURN NEXT;
END
$$;

-- The previous release's signature (expand, then contract: docs/operations.md "Upgrades"): the
-- facts with no client_id limit. A later release drops it.
CREATE OR REPLACE FUNCTION payment_creation_facts(p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_currency text)
RETURNS TABLE (same_amount integer, ext_id_taken boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY SELECT f.same_amount, f.ext_id_taken
                 FROM payment_creation_facts(p_merchant, p_terminal, p_ext_id, p_amount, p_currency, NULL, NULL, NULL, NULL) f;
END
$$;
