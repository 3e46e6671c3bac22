-- The executor's latest hand-outs, newest first: read by the score job (each executor's last 24
-- hours) and by the automatic switch-off after an expiry batch (a requisite's latest hand-outs,
-- walked backwards within its executor's). Without it both scan the whole payments table, every
-- minute and after every expiry batch; with it each create writes one more index entry.
CREATE INDEX payments_executor_created ON payments (executor_id, created_at) WHERE executor_id IS NOT NULL;
