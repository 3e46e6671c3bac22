-- The operator's reports (src/reports) read the ledger's postings of a range of days: by their
-- time, without scanning every posting ever made.
CREATE INDEX ledger_transactions_created ON ledger_transactions (created_at);
