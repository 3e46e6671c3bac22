-- Issue 30, item 5: cancelling a payment and rejecting a dispute are irreversible, and the console
-- now asks the person why. The reason is kept where the decision is: on the payment (cancel_note,
-- beside the cancel_reason code: the words of whoever cancelled it or rejected its dispute) and on
-- the dispute (decision_reason). Both are the operator's: the merchant's views do not show them.
ALTER TABLE payments ADD COLUMN cancel_note text;
ALTER TABLE disputes ADD COLUMN decision_reason text;

-- Item 6: a payment completed through a dispute kept the cancel_reason of its earlier cancellation
-- (`manual` in the merchant cabinet and its CSV). A completion now clears it (src/payments/
-- lifecycle.ts); the payments completed before that are cleared here.
UPDATE payments SET cancel_reason = NULL WHERE status IN ('COMPLETED', 'COMPLETED_APPEAL') AND cancel_reason IS NOT NULL;
