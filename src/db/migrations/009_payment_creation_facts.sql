-- The rules every payment create checks (PAY_003 ext_id taken, PAY_005 SAME_AMOUNT_LIMIT), exact
-- under concurrency: creates of one terminal and one amount queue on an advisory lock held to the
-- end of their transaction, and the facts are read after it is granted. VOLATILE, so that the
-- SELECT runs on a snapshot taken after the lock (PostgreSQL gives each statement of a volatile
-- function a fresh one): called from inside a payment create's single statement, the facts
-- still include every payment committed by the lock's earlier holders.
CREATE FUNCTION payment_creation_facts(p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_currency text)
RETURNS TABLE (same_amount integer, ext_id_taken boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_terminal::text || ':' || p_amount::text, 7461));
  RETURN QUERY
    SELECT (SELECT count(*)::integer FROM payments p
             WHERE p.terminal_id = p_terminal AND p.status = 'PENDING' AND p.amount = p_amount AND p.currency = p_currency),
           EXISTS (SELECT 1 FROM payments p WHERE p.merchant_id = p_merchant AND p.ext_id = p_ext_id);
END
$$;
