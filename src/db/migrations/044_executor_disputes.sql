-- Disputes with the executor in them, and a clock (issue 35; DESIGN.md "Disputes with the executor
-- in them"). The executor whose card a disputed payment used answers first; a deadline decides for
-- it when it does not; the claimed value is frozen on its deposit while the dispute is open; an
-- executor with too many open disputes gets no new hand-outs.

-- An open dispute (status 'open', kept so that the one-open-per-payment index stays) is in one
-- stage: awaiting the executor, contested by it, or escalated to support by its deadline. A
-- provider-executed payment's dispute has no executor and no stage: its provider decides.
ALTER TABLE disputes
  ADD COLUMN executor_id uuid REFERENCES executors(id),
  ADD COLUMN stage text CHECK (stage IN ('awaiting_executor', 'contested', 'escalated')),
  ADD COLUMN answer_due_at timestamptz,
  -- Support's own deadline, once the dispute is contested or escalated.
  ADD COLUMN support_due_at timestamptz,
  -- The USDT frozen on the executor at opening (claimed amount / rate); 0 when its deposit could
  -- not cover it (uncovered: the executor is paused until the dispute closes).
  ADD COLUMN hold numeric(30, 6) CHECK (hold >= 0),
  ADD COLUMN uncovered boolean NOT NULL DEFAULT false,
  -- The executor's answer: accepted (with the amount it received) or contested (comment, file).
  ADD COLUMN executor_answer text CHECK (executor_answer IN ('accepted', 'contested')),
  ADD COLUMN executor_amount numeric(20, 2),
  ADD COLUMN executor_comment text,
  ADD COLUMN executor_file_key text,
  ADD COLUMN executor_file_type text,
  ADD COLUMN executor_file_size integer,
  ADD COLUMN executor_file_sha256 bytea,
  ADD COLUMN answered_at timestamptz,
  -- How the deadline decided it, when it did ('approved' or 'escalated').
  ADD COLUMN timed_out text CHECK (timed_out IN ('approved', 'escalated'));

-- Open disputes before this migration had no executor in them: they wait for support, as they did.
UPDATE disputes d SET executor_id = p.executor_id,
       stage = CASE WHEN p.executor_id IS NULL THEN NULL ELSE 'escalated' END
  FROM payments p WHERE p.id = d.payment_id;

-- The executor's list and the clock's sweep.
CREATE INDEX disputes_executor ON disputes (executor_id, created_at DESC) WHERE executor_id IS NOT NULL;
CREATE INDEX disputes_answer_due ON disputes (answer_due_at) WHERE status = 'open' AND stage = 'awaiting_executor';

-- The terminal says what an unanswered dispute comes to, and may set its own answer windows
-- (by day, and at night: 22:00-08:00 in DISPUTE_TIMEZONE); null: DISPUTE_ANSWER_SECONDS.
ALTER TABLE terminals
  ADD COLUMN dispute_timeout text NOT NULL DEFAULT 'escalate' CHECK (dispute_timeout IN ('escalate', 'approve')),
  ADD COLUMN dispute_answer_seconds integer CHECK (dispute_answer_seconds BETWEEN 60 AND 604800),
  ADD COLUMN dispute_night_answer_seconds integer CHECK (dispute_night_answer_seconds BETWEEN 60 AND 604800);

-- The cap and the figures that keep it: open disputes on its payments, and how many of them its
-- deposit could not cover. Kept by increments under the executor's row lock (a count read in a
-- statement's snapshot would miss a dispute opened by a transaction it waited for).
ALTER TABLE executors
  ADD COLUMN max_open_disputes integer NOT NULL DEFAULT 5 CHECK (max_open_disputes BETWEEN 0 AND 1000),
  ADD COLUMN open_disputes integer NOT NULL DEFAULT 0 CHECK (open_disputes >= 0),
  ADD COLUMN uncovered_disputes integer NOT NULL DEFAULT 0 CHECK (uncovered_disputes >= 0),
  -- Why the executor was switched off by a rule (null: by a person, or on): 'dispute_ratio'.
  ADD COLUMN off_reason text,
  -- The dispute figures of its score (executors_score job), over 7 days.
  ADD COLUMN score_disputes integer NOT NULL DEFAULT 0,
  ADD COLUMN score_disputes_lost integer NOT NULL DEFAULT 0,
  ADD COLUMN score_disputes_late integer NOT NULL DEFAULT 0,
  ADD COLUMN score_handed_out_7d integer NOT NULL DEFAULT 0;

UPDATE executors e SET open_disputes = (SELECT count(*) FROM disputes d WHERE d.executor_id = e.id AND d.status = 'open');

-- Whether an executor's requisites are handed out: on, not paused, phones heard from, under its
-- cap of open disputes, and no open dispute its deposit could not cover.
CREATE FUNCTION executor_takes_payments(e executors) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT e.is_active AND NOT e.is_paused AND NOT e.devices_silent
     AND e.open_disputes < e.max_open_disputes AND e.uncovered_disputes = 0
$$;

CREATE OR REPLACE FUNCTION requisites_copy_executor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT e.priority, e.score, executor_takes_payments(e) INTO NEW.executor_priority, NEW.executor_score, NEW.executor_open
    FROM executors e WHERE e.id = NEW.executor_id;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION executors_copy_to_requisites() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE requisites r SET executor_priority = NEW.priority, executor_score = NEW.score, executor_open = executor_takes_payments(NEW)
   WHERE r.id IN (SELECT q.id FROM requisites q WHERE q.executor_id = NEW.id ORDER BY q.id FOR NO KEY UPDATE);
  RETURN NULL;
END
$$;

DROP TRIGGER executors_copy_to_requisites ON executors;
CREATE TRIGGER executors_copy_to_requisites
  AFTER UPDATE OF priority, score, is_active, is_paused, devices_silent, open_disputes, max_open_disputes, uncovered_disputes ON executors
  FOR EACH ROW WHEN (OLD.priority IS DISTINCT FROM NEW.priority OR OLD.score IS DISTINCT FROM NEW.score
                     OR executor_takes_payments(OLD) IS DISTINCT FROM executor_takes_payments(NEW))
  EXECUTE FUNCTION executors_copy_to_requisites();

UPDATE requisites r SET executor_open = executor_takes_payments(e) FROM executors e WHERE e.id = r.executor_id;

-- A late bank message (an expired payment's money) may be the money of an open dispute: the
-- executor says so with one tap; the message keeps which dispute it was offered for.
ALTER TABLE disputes ADD COLUMN late_notification_id uuid;
