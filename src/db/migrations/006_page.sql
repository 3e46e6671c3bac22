-- Hosted payment page (issue 7): where a payer is sent back after a successful payment.
-- Per terminal, set by the operator; the page offers it only after success.
ALTER TABLE terminals
  ADD COLUMN return_url text CHECK (return_url IS NULL OR (return_url ~ '^https?://' AND length(return_url) <= 2048));
