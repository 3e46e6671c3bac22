-- Every instance keeps the merchant API's callers in memory (merchants/identity.cache.ts): an API
-- key's terminal, its merchant's sealed secrets, the terminal's rates and routes. Whatever changes
-- one of the tables they come from, by any writer (the operator API, the CLI, a provider's
-- breaker, plain SQL), tells every instance on commit to forget them: NOTIFY is transactional, so
-- nothing is announced before it can be read, and a rolled-back change announces nothing.
-- Row triggers, not statement triggers: a statement that changes no row (the breaker's reset when
-- there is nothing to reset) announces nothing. One transaction's notifications of one table
-- arrive as one (PostgreSQL folds identical notifications of a transaction).
CREATE FUNCTION notify_identity_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kassir_identity', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['terminal_api_keys', 'merchant_secrets', 'terminals', 'rates', 'terminal_rates',
                           'terminal_routes', 'providers'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I
                      FOR EACH ROW EXECUTE FUNCTION notify_identity_change()', t || '_identity_change', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I
                      FOR EACH STATEMENT EXECUTE FUNCTION notify_identity_change()', t || '_identity_truncate', t);
  END LOOP;
END
$$;
