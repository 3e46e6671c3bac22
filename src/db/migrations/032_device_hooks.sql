-- The Android forwarders executors already use (SmsForwarder, SMS Gateway for Android, Incoming
-- SMS to URL forwarder) post to /device/v1/hooks/<device token>/<format> and sign what they send
-- with a secret the person pastes into the app: each device has its own, sealed with the master
-- key (its HMAC needs the secret itself, not a hash).
ALTER TABLE devices ADD COLUMN signing_secret text;

-- SmsForwarder's sign covers only its timestamp, not the body: a timestamp seen once with one
-- body is refused with another (a captured sign replayed over a forged message). Kept for the
-- signature's tolerance window; older rows are swept.
CREATE TABLE device_hook_stamps (
  device_id  uuid NOT NULL REFERENCES devices (id),
  stamp      text NOT NULL,
  body_hash  bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (device_id, stamp)
);
CREATE INDEX device_hook_stamps_created ON device_hook_stamps (created_at);
