-- Evidence checks (issue 36 item 4): a receipt file, a bank reference or a payer's name that
-- does not fit flags the payment or dispute for a person (risk_hits, action 'flagged'); none of
-- them ever decides alone. What they look up needs its own index: each check runs inside the
-- transaction that attaches the evidence, so it must stay one index probe.

-- A receipt's content hash, looked up across every merchant: was this file already used for
-- another payment? Also the executor's contest file, kept on its dispute (migration 044).
CREATE INDEX receipts_sha256 ON receipts (sha256, created_at) WHERE sha256 IS NOT NULL;
CREATE INDEX disputes_executor_file_sha256 ON disputes (executor_file_sha256, answered_at) WHERE executor_file_sha256 IS NOT NULL;

-- The bank's own reference for a transfer ("Номер операции 123456", "СБП ID A4…") and the payer's
-- name as the bank message wrote it, when the text has them. A reference names one transfer: the
-- same one reported for two payments is one transfer shown twice. Not unique: the same message
-- can arrive twice (an SMS and its push), and the second one completes nothing.
ALTER TABLE notifications ADD COLUMN reference text, ADD COLUMN payer_name text;
CREATE INDEX notifications_reference ON notifications (reference, created_at) WHERE reference IS NOT NULL;

-- The payer's name the merchant sent on create (an optional Kassir extension of POST
-- /v1/payments). Beside the payment rather than on it: most creates send none, and the create's
-- statements (the cascade's, the window's batch) stay as they are.
CREATE TABLE payment_payer_names (
  payment_id  uuid PRIMARY KEY REFERENCES payments (id),
  merchant_id uuid NOT NULL,
  payer_name  text NOT NULL CHECK (length(payer_name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- The dispute queue filtered to flagged disputes (GET /admin/v1/disputes?flagged=true) reads the
-- open flags of a dispute: risk_hits_dispute (migration 045) serves it.

-- A person settling a flag may say why ("same payer, a second order"); the audit row has it too.
ALTER TABLE risk_hits ADD COLUMN settle_comment text;
