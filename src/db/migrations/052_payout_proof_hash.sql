-- A payout proof's content hash (issue 36, evidence checks): an executor's proof of a transfer is
-- hashed (sha256) as a receipt is, and the same file already used — as the proof of another payout,
-- or as a receipt or a contest file of a payment — flags the payout for a person (risk_hits,
-- 'receipt_reused', action 'flagged', payout_id), in the transaction that completes it. Proofs
-- kept before this migration have no hash: they are neither checked nor found.
ALTER TABLE payouts ADD COLUMN proof_sha256 bytea;
CREATE INDEX payouts_proof_sha256 ON payouts (proof_sha256, completed_at) WHERE proof_sha256 IS NOT NULL;
