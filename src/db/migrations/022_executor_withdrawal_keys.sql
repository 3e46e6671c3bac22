-- An executor's app that retries POST /executor/v1/withdrawals after a lost answer must not
-- withdraw twice: the request's Idempotency-Key is kept on the withdrawal, unique per executor, so
-- a repeat finds the withdrawal the first request made (merchants' keys live in idempotency_keys,
-- keyed by merchant; an executor's withdrawal is its one money-moving POST, so the key sits on it).
ALTER TABLE withdrawals ADD COLUMN executor_key text CHECK (executor_key IS NULL OR (executor_id IS NOT NULL AND length(executor_key) BETWEEN 1 AND 255));
CREATE UNIQUE INDEX withdrawals_executor_key ON withdrawals (executor_id, executor_key) WHERE executor_key IS NOT NULL;
