-- Rates that keep themselves (issue 31; DESIGN.md "Rate sources (contract)").
--
-- Every rate setting lives in one table, `rates`: the currency's own (terminal_id NULL) and a
-- terminal's (what `terminal_rates` held), so that one job refreshes them all and one statement
-- tells a terminal its rates. A setting is
--   manual  a number a person typed (`rate`, kept until they change it);
--   feed    an exchange feed (`source`, `options`, `cross_check`) refreshed every
--           `refresh_seconds`: `figure` is the market's robust figure, `rate` = figure × (1 +
--           markup_percent / 100), and the rate is stale once `fetched_at` is older than
--           `max_age_seconds` (creates that need it are refused; nothing stands in for it);
--   markup  (a terminal's only) the currency's own figure with this terminal's markup.
-- Each refresh, typed or fetched, is a row of rate_refreshes with the sample it used, and a
-- payment records the refresh that gave its rate (payments.rate_refresh_id).

ALTER TABLE rates DROP CONSTRAINT rates_pkey;
ALTER TABLE rates
  ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
  ADD COLUMN terminal_id uuid REFERENCES terminals(id),
  ALTER COLUMN rate DROP NOT NULL,
  ADD COLUMN mode text NOT NULL DEFAULT 'manual' CHECK (mode IN ('manual', 'feed', 'markup')),
  -- The market's figure before the markup (a manual rate: the rate itself).
  ADD COLUMN figure numeric(20, 8) CHECK (figure > 0),
  ADD COLUMN source text CHECK (source IN ('bybit_p2p', 'binance_p2p', 'htx_p2p', 'rapira', 'grinex')),
  ADD COLUMN options jsonb NOT NULL DEFAULT '{}',
  -- Further sources the figure is checked against: [{source, options}].
  ADD COLUMN cross_check jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN markup_percent numeric(8, 4) NOT NULL DEFAULT 0 CHECK (markup_percent > -100 AND markup_percent < 1000),
  -- Payouts' own markup (the sell side); null: payouts use markup_percent.
  ADD COLUMN payout_markup_percent numeric(8, 4) CHECK (payout_markup_percent > -100 AND payout_markup_percent < 1000),
  ADD COLUMN refresh_seconds integer NOT NULL DEFAULT 30 CHECK (refresh_seconds >= 5),
  ADD COLUMN max_age_seconds integer NOT NULL DEFAULT 600 CHECK (max_age_seconds >= 10),
  -- A source whose figure is further than this from the others' is left out of the refresh.
  ADD COLUMN max_spread_percent numeric(8, 4) NOT NULL DEFAULT 3 CHECK (max_spread_percent > 0),
  -- A figure further than this from the current one is held for a person (null: never held).
  ADD COLUMN max_jump_percent numeric(8, 4) CHECK (max_jump_percent > 0),
  -- When the feed last confirmed `rate` (or a person kept it): the age that makes it stale.
  ADD COLUMN fetched_at timestamptz,
  -- The refresh that gave `rate`; a jump waiting for a person.
  ADD COLUMN refresh_id bigint,
  ADD COLUMN held_refresh_id bigint,
  -- The refresh job's bookkeeping: when the feed is fetched next, failures in a row, the last one.
  ADD COLUMN next_refresh_at timestamptz,
  ADD COLUMN failures integer NOT NULL DEFAULT 0,
  ADD COLUMN last_error text,
  -- Bumped by every change of the settings: a fetch begun under older settings is not recorded.
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD CONSTRAINT rates_mode_fields CHECK (
    CASE mode
      WHEN 'manual' THEN rate IS NOT NULL AND source IS NULL
      WHEN 'feed' THEN source IS NOT NULL
      ELSE terminal_id IS NOT NULL AND source IS NULL AND rate IS NULL
    END);
UPDATE rates SET figure = rate;
CREATE UNIQUE INDEX rates_currency ON rates (currency) WHERE terminal_id IS NULL;
CREATE UNIQUE INDEX rates_terminal_currency ON rates (terminal_id, currency) WHERE terminal_id IS NOT NULL;
CREATE INDEX rates_due ON rates (next_refresh_at) WHERE mode = 'feed';

INSERT INTO rates (terminal_id, currency, rate, figure, updated_at)
SELECT terminal_id, currency, rate, rate, updated_at FROM terminal_rates;
DROP TABLE terminal_rates;

-- Every value a rate setting took or was offered: typed by a person, fetched, held for a person,
-- or failed. `sample` holds what a fetch saw (per source: the adverts, the ones used and left out,
-- its figure), so a payment's rate can be explained later. Rows that gave a rate are kept; the
-- others go after two days (the console's chart shows the last day).
CREATE TABLE rate_refreshes (
  id             bigserial PRIMARY KEY,
  rate_id        uuid REFERENCES rates(id) ON DELETE SET NULL,
  terminal_id    uuid,
  currency       text NOT NULL,
  at             timestamptz NOT NULL DEFAULT now(),
  kind           text NOT NULL CHECK (kind IN ('manual', 'settings', 'fetched', 'held', 'failed', 'accepted', 'kept')),
  source         text,
  figure         numeric(20, 8),
  markup_percent numeric(8, 4),
  rate           numeric(20, 8),
  -- This row became the setting's rate (a payment may name it).
  gave_rate      boolean NOT NULL DEFAULT false,
  sample         jsonb,
  error          text,
  -- Who, for a person's act (a user id, or "admin-token").
  actor          text
);
CREATE INDEX rate_refreshes_rate_at ON rate_refreshes (rate_id, at);
CREATE INDEX rate_refreshes_purge ON rate_refreshes (at) WHERE NOT gave_rate;

-- The typed rates there were, as their first refreshes.
WITH typed AS (
  INSERT INTO rate_refreshes (rate_id, terminal_id, currency, at, kind, figure, markup_percent, rate, gave_rate, actor)
  SELECT id, terminal_id, currency, updated_at, 'manual', rate, 0, rate, true, 'migration'
    FROM rates
  RETURNING id, rate_id
)
UPDATE rates r SET refresh_id = typed.id FROM typed WHERE typed.rate_id = r.id;

-- The refresh that gave a payment's or a payout's rate (null before this migration).
ALTER TABLE payments ADD COLUMN rate_refresh_id bigint;
ALTER TABLE payouts ADD COLUMN rate_refresh_id bigint;

DROP FUNCTION payment_create_windows(text[], text[], text[], numeric[], text[], text[], uuid[], uuid[], text[], numeric[], text[],
                                     numeric[], numeric[], boolean[], text[], text[], text[], text[], integer[], integer, numeric[], integer);
DROP FUNCTION payment_create_window(text, text, text, numeric, text, text, uuid, uuid, text, numeric, text, numeric, numeric, boolean,
                                    text, text, text, text, integer, integer, numeric, integer, boolean);

-- Their new text, with p_rate_refresh (the rate refresh that gave p_rate, stored on the payment),
-- is src/db/functions/payment_create_window.sql, applied after the migrations on every start.
