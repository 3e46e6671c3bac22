-- A terminal's own webhook address and where the payment page sends a payer whose payment did not
-- go through (issue 33 item 3): the operator sets both in the console. notify_url is used for the
-- terminal's payments and payouts created without one of their own; return_url (migration 006)
-- stays the address after a successful payment.
ALTER TABLE terminals
  ADD COLUMN notify_url text CHECK (length(notify_url) <= 2048),
  ADD COLUMN fail_url text CHECK (length(fail_url) <= 2048);
