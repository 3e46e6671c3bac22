-- Webhook delivery by a dispatcher that takes due events from the outbox in batches.
--
-- Each event used to add a job of its own to the job queue (graphile-worker's add_job, with a
-- named queue per resource for the order), in the transaction of the status change: issue 4's
-- benchmark measured ~1.2 ms of database time for that one statement, the largest part of a
-- completion's, and delivery ran one job per event (~140 events/s at most, behind the
-- completions it was meant to follow). Now the outbox row is the work item: a dispatch job
-- leases due events (leased_until), delivers them concurrently and records each outcome; the
-- order per resource comes from the lease query, which takes a resource's oldest pending event
-- only. A lease that ran out (its dispatcher died) makes the event due again.
ALTER TABLE webhook_events ADD COLUMN leased_until timestamptz;

-- Writing events wakes the dispatchers: every instance running jobs listens on this channel
-- (webhooks/wakeup.ts) and schedules a dispatch. A statement trigger, so that every writer (the
-- outbox, plain SQL) announces, once per statement; NOTIFY is sent at COMMIT, so a dispatch
-- started by it sees the events.
CREATE FUNCTION notify_webhook_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kassir_webhooks', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER webhook_events_announce AFTER INSERT ON webhook_events
  FOR EACH STATEMENT EXECUTE FUNCTION notify_webhook_events();
