-- Issue 30: a double click on "Adjust deposit" posted the money twice. Every operator route that
-- moves money now takes an Idempotency-Key as the merchant API's money routes do
-- (src/http/idempotency.ts): the first answer to a key is kept for 24 h and replayed. Keys belong
-- to whoever sent them — `token` (the bearer ADMIN_TOKEN) or `user:<id>` (a person signed in) — so
-- two people never meet on one key. Otherwise as idempotency_keys (migrations 005 and 015).
CREATE TABLE operator_idempotency_keys (
  owner         text NOT NULL,
  key           text NOT NULL,
  request_hash  bytea NOT NULL,
  status_code   integer,
  response_body text,
  request_id    uuid NOT NULL DEFAULT gen_random_uuid(),
  claim         uuid NOT NULL DEFAULT gen_random_uuid(),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner, key)
);
CREATE INDEX operator_idempotency_keys_created ON operator_idempotency_keys (created_at);
