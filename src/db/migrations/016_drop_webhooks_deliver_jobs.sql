-- Jobs of the task `webhooks_deliver` (one per webhook event, added before migration 013) have no
-- handler any more. The events they stood for are rows of webhook_events still pending, which the
-- dispatch delivers (at start, on every announcement and from its cron line), so such jobs left in
-- a deployed queue are removed rather than left waiting for a task nobody runs. A job some old
-- instance is running right now is left to it (complete_jobs skips locked jobs). The job queue's
-- schema exists only once a worker has started; a database without it has no such jobs.
DO $$
BEGIN
  IF to_regclass('graphile_worker.jobs') IS NOT NULL THEN
    PERFORM graphile_worker.complete_jobs(
      ARRAY(SELECT id FROM graphile_worker.jobs WHERE task_identifier = 'webhooks_deliver'));
  END IF;
END
$$;
