-- Traffic classes and requisite velocity (issue 36, items 3 and 2's per-requisite velocity;
-- docs/risk-classes.md).
--
-- A payer's class comes from its history with the merchant: 'new' (fewer completed payments than
-- returning_from; every create without a client_id), 'returning', 'trusted' (trusted_from or
-- more). Executors and requisites may be limited to classes; the cascade hands a requisite only
-- to payers of its classes and of its executor's. Separately, every requisite may be handed out
-- at most so many times, and for at most so much, in a sliding window (set globally).

-- The operator's settings, one row: the class thresholds and the requisite velocity. Read by the
-- cascade itself (payer_class, payment_create_window), so that every instance sees a change at
-- once and a create costs no round trip for it.
CREATE TABLE risk_pool_rules (
  id             boolean PRIMARY KEY DEFAULT true CHECK (id),
  returning_from integer NOT NULL DEFAULT 1 CHECK (returning_from >= 1),
  trusted_from   integer NOT NULL DEFAULT 10,
  -- Velocity per requisite: at most max_count hand-outs in count_seconds, at most max_amount (in
  -- the requisite's own currency, on what the payer pays) in amount_seconds. Null: no limit.
  requisite_max_count      integer CHECK (requisite_max_count >= 1),
  requisite_count_seconds  integer CHECK (requisite_count_seconds BETWEEN 1 AND 86400),
  requisite_max_amount     numeric(20, 2) CHECK (requisite_max_amount > 0),
  requisite_amount_seconds integer CHECK (requisite_amount_seconds BETWEEN 1 AND 86400),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (trusted_from > returning_from),
  CHECK ((requisite_max_count IS NULL) = (requisite_count_seconds IS NULL)),
  CHECK ((requisite_max_amount IS NULL) = (requisite_amount_seconds IS NULL))
);
INSERT INTO risk_pool_rules DEFAULT VALUES;

-- A payer's completed payments with a merchant, counted by the payment lifecycle in the
-- transaction of each completion (test payments left out), so that a create reads its class by
-- primary key instead of counting the payer's payments. Two completions of one payer at once
-- both count: the second's upsert waits for the first's row and adds to it.
CREATE TABLE payer_history (
  merchant_id uuid NOT NULL,
  client_id   text NOT NULL,
  completed   integer NOT NULL DEFAULT 0,
  PRIMARY KEY (merchant_id, client_id)
);
INSERT INTO payer_history (merchant_id, client_id, completed)
SELECT merchant_id, client_id, count(*)
  FROM payments
 WHERE status IN ('COMPLETED', 'COMPLETED_APPEAL') AND NOT is_test AND client_id IS NOT NULL
 GROUP BY merchant_id, client_id;

-- The class a payment's payer had when it was created (null for payments made before this).
ALTER TABLE payments ADD COLUMN payer_class text CHECK (payer_class IN ('new', 'returning', 'trusted'));

-- The classes an executor or a requisite takes (null: all). A requisite carries its executor's
-- classes too, copied as executor_priority is (migration 019), so that the window walk reads
-- them from the row it already has.
ALTER TABLE executors ADD COLUMN traffic_classes text[]
  CHECK (traffic_classes <@ ARRAY['new', 'returning', 'trusted'] AND cardinality(traffic_classes) > 0);
ALTER TABLE requisites ADD COLUMN traffic_classes text[]
  CHECK (traffic_classes <@ ARRAY['new', 'returning', 'trusted'] AND cardinality(traffic_classes) > 0);
ALTER TABLE requisites ADD COLUMN executor_traffic_classes text[];

CREATE FUNCTION requisites_copy_executor_classes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT e.traffic_classes INTO NEW.executor_traffic_classes FROM executors e WHERE e.id = NEW.executor_id;
  RETURN NEW;
END
$$;
CREATE TRIGGER requisites_copy_executor_classes BEFORE INSERT OR UPDATE OF executor_id ON requisites
  FOR EACH ROW EXECUTE FUNCTION requisites_copy_executor_classes();

-- Lock order as executors_copy_to_requisites (migration 019): the executor's row, then its
-- requisites in id order.
CREATE FUNCTION executors_copy_classes_to_requisites() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE requisites r SET executor_traffic_classes = NEW.traffic_classes
   WHERE r.id IN (SELECT q.id FROM requisites q WHERE q.executor_id = NEW.id ORDER BY q.id FOR NO KEY UPDATE);
  RETURN NULL;
END
$$;
CREATE TRIGGER executors_copy_classes_to_requisites AFTER UPDATE OF traffic_classes ON executors
  FOR EACH ROW WHEN (OLD.traffic_classes IS DISTINCT FROM NEW.traffic_classes)
  EXECUTE FUNCTION executors_copy_classes_to_requisites();
