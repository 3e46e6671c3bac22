-- The requisites' shape checked where it can change (issue 17, item 7).
--
-- Every create marks its requisite used (UPDATE … SET last_used_at), and PostgreSQL reads back
-- and prepares every CHECK constraint of a table for every UPDATE of it, whatever the columns
-- updated: eleven constraints per create, for rules only the operator and the executor can break.
-- The requisite's shape rules (type, value, currency, country, methods, amounts, limits) are now
-- checked by a trigger on INSERT and on UPDATE of those columns only, raising the same
-- check_violation under the same constraint names (as migration 026 does for the ledger accounts).

CREATE FUNCTION requisites_shape() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  failed text;
BEGIN
  failed := CASE
    WHEN NEW.type NOT IN ('card', 'sbp', 'phone', 'sim', 'qr') THEN 'requisites_type_check'
    WHEN NOT (length(NEW.value) BETWEEN 1 AND 2000) THEN 'requisites_value_check'
    WHEN NEW.currency !~ '^[A-Z]{3}$' THEN 'requisites_currency_check'
    WHEN NEW.country !~ '^[A-Z]{2}$' THEN 'requisites_country_check'
    WHEN NOT (cardinality(NEW.methods) > 0) THEN 'requisites_methods_check'
    WHEN NOT (NEW.min_amount >= 0) THEN 'requisites_min_amount_check'
    WHEN NEW.max_amount < NEW.min_amount THEN 'requisites_check'
    WHEN NEW.daily_turnover_limit < 0 THEN 'requisites_daily_turnover_limit_check'
    WHEN NEW.monthly_turnover_limit < 0 THEN 'requisites_monthly_turnover_limit_check'
    WHEN NEW.daily_count_limit < 0 THEN 'requisites_daily_count_limit_check'
    WHEN NEW.monthly_count_limit < 0 THEN 'requisites_monthly_count_limit_check'
  END;
  IF failed IS NOT NULL THEN
    RAISE EXCEPTION 'new row for relation "requisites" violates check constraint "%"', failed
      USING ERRCODE = 'check_violation', CONSTRAINT = failed, TABLE = 'requisites';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER requisites_shape
  BEFORE INSERT OR UPDATE OF type, value, currency, country, methods, min_amount, max_amount,
                             daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit
  ON requisites FOR EACH ROW EXECUTE FUNCTION requisites_shape();

ALTER TABLE requisites
  DROP CONSTRAINT requisites_type_check,
  DROP CONSTRAINT requisites_value_check,
  DROP CONSTRAINT requisites_currency_check,
  DROP CONSTRAINT requisites_country_check,
  DROP CONSTRAINT requisites_methods_check,
  DROP CONSTRAINT requisites_min_amount_check,
  DROP CONSTRAINT requisites_check,
  DROP CONSTRAINT requisites_daily_turnover_limit_check,
  DROP CONSTRAINT requisites_monthly_turnover_limit_check,
  DROP CONSTRAINT requisites_daily_count_limit_check,
  DROP CONSTRAINT requisites_monthly_count_limit_check;
