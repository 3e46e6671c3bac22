-- A phone that stops reporting takes its executor's requisites out of the cascade until it
-- reports again (issue 19): payments handed out to a card whose phone is off would never be
-- seen paid. The executor (or the operator) sets how long a silence is tolerated; null: the rule
-- is off (a forwarder that posts only when a bank message comes has long honest silences).
-- Executors without devices are never silent.
ALTER TABLE executors
  ADD COLUMN device_silence_minutes integer CHECK (device_silence_minutes BETWEEN 1 AND 10080),
  ADD COLUMN devices_silent boolean NOT NULL DEFAULT false;

-- executor_open (migration 019) now also requires the phones to be heard from.
CREATE OR REPLACE FUNCTION requisites_copy_executor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT e.priority, e.score, e.is_active AND NOT e.is_paused AND NOT e.devices_silent INTO NEW.executor_priority, NEW.executor_score, NEW.executor_open
    FROM executors e WHERE e.id = NEW.executor_id;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION executors_copy_to_requisites() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE requisites r SET executor_priority = NEW.priority, executor_score = NEW.score,
         executor_open = NEW.is_active AND NOT NEW.is_paused AND NOT NEW.devices_silent
   WHERE r.id IN (SELECT q.id FROM requisites q WHERE q.executor_id = NEW.id ORDER BY q.id FOR NO KEY UPDATE);
  RETURN NULL;
END
$$;

DROP TRIGGER executors_copy_to_requisites ON executors;
CREATE TRIGGER executors_copy_to_requisites AFTER UPDATE OF priority, score, is_active, is_paused, devices_silent ON executors
  FOR EACH ROW WHEN (OLD.priority IS DISTINCT FROM NEW.priority OR OLD.score IS DISTINCT FROM NEW.score
                     OR OLD.is_active IS DISTINCT FROM NEW.is_active OR OLD.is_paused IS DISTINCT FROM NEW.is_paused
                     OR OLD.devices_silent IS DISTINCT FROM NEW.devices_silent)
  EXECUTE FUNCTION executors_copy_to_requisites();
