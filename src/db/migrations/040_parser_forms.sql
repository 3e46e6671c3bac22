-- Message forms a person taught Kassir (docs/devices.md "Teaching a new message form"): when the
-- built-in parsers (src/incoming/parsers/) read nothing in a bank message, the live forms are
-- tried. A form is literal text with typed holes ({amount} {card} {payer} {balance} {time}
-- {date} {any}); it is compiled to an anchored pattern with every literal escaped, so no
-- person's regular expression is ever run. Each change is a new version; one version of a form
-- is live at a time, the ones before it retired.
CREATE TABLE parser_forms (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- The bank's directory code (banks.code), as the hint names it.
  bank         text NOT NULL CHECK (length(bank) BETWEEN 1 AND 50),
  currency     text NOT NULL CHECK (currency IN ('RUB', 'KZT', 'TJS')),
  -- Proposed by an executor from the cabinet: only its own proposals are shown to it.
  executor_id  uuid REFERENCES executors (id),
  created_by   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

--   draft    written, not applied (an executor's proposal, or a staff draft not yet checked);
--   live     applied to every message the built-in parsers read nothing in;
--   retired  no longer applied (replaced by a later version, or the form retired).
CREATE TABLE parser_form_versions (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  form_id      uuid NOT NULL REFERENCES parser_forms (id),
  version      integer NOT NULL CHECK (version >= 1),
  template     text NOT NULL CHECK (length(template) BETWEEN 1 AND 1000),
  -- The message it was taught from (as the person marked it) and that message's id.
  sample       text NOT NULL CHECK (length(sample) BETWEEN 1 AND 1000),
  source_kind  text CHECK (source_kind IN ('device_message', 'notification')),
  source_id    uuid,
  status       text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'live', 'retired')),
  created_by   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_by text,
  published_at timestamptz,
  retired_at   timestamptz,
  -- What the last check before going live found (lines it reads newly; offending lines when refused).
  last_check   jsonb,
  UNIQUE (form_id, version)
);
CREATE UNIQUE INDEX parser_form_versions_one_live ON parser_form_versions (form_id) WHERE status = 'live';
CREATE INDEX parser_form_versions_live ON parser_form_versions (published_at) WHERE status = 'live';
