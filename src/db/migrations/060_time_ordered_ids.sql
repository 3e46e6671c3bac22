-- kassir:locks ACCESS EXCLUSIVE: payments, ledger_transactions, notifications, webhook_events, device_messages, payment_confirmations, receipts, disputes, payouts, withdrawals, transfers, provider_actions, risk_hits
--
-- Time-ordered ids for the rows that only grow (issue 38; docs/performance.md "Time-ordered ids").
--
-- Until now every id was gen_random_uuid(): a create's new payment, its hold's ledger transaction,
-- later its webhook event and notification, each put its primary-key entry (and the entries of the
-- indexes keyed by these ids: ledger_transactions_once's ref_id, ledger_entries_transaction,
-- webhook_events_resource, notifications_payment) on a random leaf of an index of 10^7 entries and
-- more: a leaf neither in shared_buffers nor touched since the last checkpoint, so read, and logged
-- whole (a full-page image) at its first change after every checkpoint.
--
-- uuid_v7(at): an RFC 9562 version 7 uuid — the Unix time in milliseconds (48 bits), the version,
-- the sub-millisecond fraction of `at` (12 bits, as PostgreSQL 18's own uuidv7() fills them: ids
-- made one after the other in one session come out in order), the variant and 62 random bits.
-- Not PostgreSQL 18's uuidv7(): the system's PostgreSQL 15 has none. Ids made now sort after every
-- id made before: their entries land on the indexes' right-hand leaves, the ones just written.
-- These ids are no secrets (nothing is authorised by knowing one); a payment's reveals the
-- creation time that the API returns beside it anyway (created_at). Secrets stay random: the page
-- token (src/payments/page-token.ts), sessions, keys.
--
-- Only the columns' DEFAULTs change: no row is read or rewritten, and rows keep the ids they have
-- (old random ids and new ordered ones index together: uuids compare as bytes). SET DEFAULT takes
-- ACCESS EXCLUSIVE for a catalog change only; the runner takes the locks first (the header above).
-- The previous release, running beside this one during an upgrade, inserts through these defaults
-- or through its own random ids, both of which this schema takes.
SET LOCAL lock_timeout = '1500ms';

CREATE OR REPLACE FUNCTION uuid_v7(p_at timestamptz DEFAULT clock_timestamp()) RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
           substring(int8send(floor(extract(epoch FROM p_at) * 1000)::bigint) FROM 3 FOR 6)
           || int2send((28672 + (extract(epoch FROM p_at) * 1000000)::bigint % 1000 * 4096 / 1000)::smallint)
           || substring(uuid_send(gen_random_uuid()) FROM 9 FOR 8),
           'hex')::uuid
$$;

ALTER TABLE payments ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE ledger_transactions ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE notifications ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE webhook_events ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE device_messages ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE payment_confirmations ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE receipts ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE disputes ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE payouts ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE withdrawals ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE transfers ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE provider_actions ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE risk_hits ALTER COLUMN id SET DEFAULT uuid_v7();
