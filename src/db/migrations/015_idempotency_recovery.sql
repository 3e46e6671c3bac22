-- An Idempotency-Key whose request never answered (its process was killed, or the database went
-- away under it) kept its claim with no stored answer, and every retry answered 409 "still being
-- processed" for 24 hours (issue 15's kill -9 suite). Such a claim is now taken over by a retry of
-- the same request once it is older than a lease (src/http/idempotency.ts). The request may have
-- committed before its process died, so a takeover must not do it twice:
--   * `request_id` names the request a key stands for: kept when a retry takes an abandoned claim
--     over, new when the key is claimed afresh (first use, or after its 24 hours);
--   * `claim` names the current claimant: only it stores its answer or frees the key, so that a
--     slow first attempt cannot overwrite or delete what a retry that took over has done;
--   * withdrawals and transfers, which have no key of their own (payments and payouts have ext_id),
--     record the request_id they were made for, unique per merchant, in the transaction that makes
--     them: the retry finds what the first attempt did instead of moving the money again.
ALTER TABLE idempotency_keys
  ADD COLUMN request_id uuid NOT NULL DEFAULT gen_random_uuid(),
  ADD COLUMN claim uuid NOT NULL DEFAULT gen_random_uuid();

ALTER TABLE withdrawals ADD COLUMN idempotency_request uuid;
ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_idempotency_request_key UNIQUE (merchant_id, idempotency_request);
ALTER TABLE transfers ADD COLUMN idempotency_request uuid;
ALTER TABLE transfers ADD CONSTRAINT transfers_idempotency_request_key UNIQUE (merchant_id, idempotency_request);
