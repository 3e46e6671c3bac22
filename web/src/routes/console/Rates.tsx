import { LineChart } from '@mantine/charts';
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Collapse,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { type ReactNode, useEffect, useState } from 'react';
import { useMe } from '../../api/auth';
import {
  type EffectiveRate,
  RATE_CURRENCIES,
  type RateBody,
  type RateHistory,
  type RateOptions,
  type RateScope,
  type RateSetting,
  type RateState,
  type SampleSource,
  SOURCES,
  sourceLabel,
  useDecideHeld,
  useRateHistory,
  useRateSettings,
  useRefreshRate,
  useRemoveTerminalRate,
  useSaveRate,
  useTerminalRates,
} from '../../api/rates';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { When } from '../../components/When';
import { type MessageKey, useI18n } from '../../i18n';

// The Rates screen (issue 31, item 5): per currency its source, markup, working rate, age and
// state, with the action a stale or held rate needs; a currency's chart of the last day and the
// adverts of its last fetch; the form that types a rate or sets a feed; and a terminal's own rates.

function useIsAdmin(): boolean {
  return useMe().data?.user.role === 'admin';
}

/** The current time, ticking every second: ages count up between two answers. */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** "12 s ago", "3 min ago", "2 h ago". */
function useAgo(): (seconds: number) => string {
  const { t } = useI18n();
  return (seconds) => {
    const s = Math.max(0, Math.floor(seconds));
    if (s < 120) return t('rates.agoSeconds', { n: s });
    if (s < 7200) return t('rates.agoMinutes', { n: Math.floor(s / 60) });
    return t('rates.agoHours', { n: Math.floor(s / 3600) });
  };
}

/** A setting's age now: the server's age_seconds when it answered, plus the time since. */
function ageNow(setting: RateSetting, answeredAt: number, now: number): number | null {
  if (setting.age_seconds === null) return null;
  return setting.age_seconds + Math.max(0, (now - answeredAt) / 1000);
}

const STATE_COLORS: Record<RateState, string> = {
  fresh: 'green',
  stale: 'red',
  waiting: 'blue',
  held: 'orange',
  manual: 'gray',
  markup: 'grape',
};

const STATE_LABELS: Record<RateState, MessageKey> = {
  fresh: 'rates.state.fresh',
  stale: 'rates.state.stale',
  waiting: 'rates.state.waiting',
  held: 'rates.state.held',
  manual: 'rates.state.manual',
  markup: 'rates.state.markup',
};

export function RateStateBadge({ state }: { state: RateState }) {
  const { t } = useI18n();
  return (
    <Badge color={STATE_COLORS[state]} variant="light" style={{ flexShrink: 0 }}>
      {t(STATE_LABELS[state])}
    </Badge>
  );
}

const LEFT_OUT: Record<string, MessageKey> = {
  promoted: 'rates.leftOut.promoted',
  pay_method: 'rates.leftOut.pay_method',
  amount: 'rates.leftOut.amount',
  trader: 'rates.leftOut.trader',
  rank: 'rates.leftOut.rank',
  outlier: 'rates.leftOut.outlier',
};

const KINDS: Record<string, MessageKey> = {
  manual: 'rates.kind.manual',
  settings: 'rates.kind.settings',
  fetched: 'rates.kind.fetched',
  held: 'rates.kind.held',
  failed: 'rates.kind.failed',
  accepted: 'rates.kind.accepted',
  kept: 'rates.kind.kept',
};

type I18n = ReturnType<typeof useI18n>;

/** "+1.5 %" ("+1,5 %" in Russian), never broken across lines. */
function signedPercent(value: number, lang: I18n['lang']): string {
  const text = String(value).replace('.', lang === 'ru' ? ',' : '.');
  return `${value > 0 ? '+' : ''}${text}\u00a0%`;
}

/** Where the rate comes from, in words: "Bybit P2P · markup +1.5 %", "typed", "the currency's rate · markup +2 %". */
function originText(setting: RateSetting, { t, lang }: I18n): string {
  if (setting.mode === 'manual') return t('rates.typed');
  const markup = `${t('rates.markup')} ${signedPercent(setting.markup_percent, lang)}`;
  const payout = setting.payout_markup_percent === null ? '' : ` · ${t('rates.payoutMarkup')} ${signedPercent(setting.payout_markup_percent, lang)}`;
  if (setting.mode === 'markup') return `${t('rates.currencys')} · ${markup}${payout}`;
  const checked = setting.cross_check.length > 0 ? ` (+ ${setting.cross_check.map((c) => sourceLabel(c.source)).join(', ')})` : '';
  return `${sourceLabel(setting.source)}${checked} · ${markup}${payout}`;
}

/**
 * One setting at a glance: the working rate, where it comes from, its age and state, and for a
 * stale or held rate what to do, with the buttons that do it (admins).
 */
export function RateSummary({ setting, scope, answeredAt, children }: { setting: RateSetting; scope: RateScope; answeredAt: number; children?: ReactNode }) {
  const i18n = useI18n();
  const { t } = i18n;
  const isAdmin = useIsAdmin();
  const now = useNow();
  const ago = useAgo();
  const refresh = useRefreshRate();
  const decide = useDecideHeld();
  const age = ageNow(setting, answeredAt, now);
  const busy = decide.isPending;
  // How far the held figure is from the current one, for reading only (the service decided the hold).
  const jump = setting.held?.figure != null && setting.figure ? Math.round(((setting.held.figure - setting.figure) / setting.figure) * 1000) / 10 : null;
  return (
    <Stack gap="xs">
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <Stack gap={0}>
          <Text size="xl" fw={600}>
            {setting.rate === null ? '—' : <Money value={setting.rate} currency={setting.currency} />}
          </Text>
          <Text size="xs" c="dimmed">
            1 USDT · {originText(setting, i18n)}
          </Text>
        </Stack>
        <RateStateBadge state={setting.state} />
      </Group>
      {setting.mode === 'feed' && (
        <Text size="sm">
          {age === null ? t('rates.neverFetched') : t('rates.fetched', { ago: ago(age) })}
          {setting.figure !== null && (
            <>
              {' · '}
              {t('rates.figure')} <Money value={setting.figure} />
            </>
          )}
        </Text>
      )}
      {setting.mode === 'manual' && (
        <Text size="sm" c="dimmed">
          {t('rates.typedAt')} <When at={setting.updated_at} />
        </Text>
      )}
      {setting.state === 'waiting' && (
        <Text size="sm" c="blue">
          {t('rates.waitingAction', { source: sourceLabel(setting.source) ?? '' })}
        </Text>
      )}
      {setting.state === 'stale' && (
        <Alert color="red" p="xs" title={t('rates.staleTitle')}>
          <Text size="sm">
            {age === null
              ? t('rates.staleNeverAction')
              : t('rates.staleAction', { minutes: Math.max(1, Math.floor(age / 60)), max: Math.round((setting.max_age_seconds ?? 0) / 60) })}
          </Text>
        </Alert>
      )}
      {setting.held && (
        <Alert color="orange" p="xs" title={t('rates.heldTitle')}>
          <Stack gap={6}>
            <Text size="sm">
              {t('rates.heldNew')} <Money value={setting.held.rate} currency={setting.currency} />
              {jump !== null && ` (${signedPercent(jump, i18n.lang)})`} · {t('rates.figure')} <Money value={setting.held.figure} /> ·{' '}
              <When at={setting.held.at} />
            </Text>
            <Text size="sm">
              {t('rates.heldCurrent')} <Money value={setting.rate} currency={setting.currency} />
            </Text>
            <Text size="sm">{t('rates.heldAction')}</Text>
            {isAdmin && (
              <Group gap="xs">
                <Button
                  size="xs"
                  color="orange"
                  onClick={() => decide.mutate({ scope, decision: 'accept' })}
                  loading={busy && decide.variables?.decision === 'accept'}
                  disabled={busy}
                >
                  {t('rates.accept')}
                </Button>
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => decide.mutate({ scope, decision: 'keep' })}
                  loading={busy && decide.variables?.decision === 'keep'}
                  disabled={busy || setting.rate === null}
                >
                  {t('rates.keep')}
                </Button>
              </Group>
            )}
          </Stack>
        </Alert>
      )}
      {(setting.failures > 0 || setting.last_error) && setting.mode === 'feed' && (
        <Text size="xs" c="red" style={{ overflowWrap: 'anywhere' }}>
          {t('rates.failures', { n: setting.failures })}
          {setting.last_error ? ` · ${setting.last_error}` : ''}
        </Text>
      )}
      <Group gap="xs">
        {children}
        {isAdmin && setting.mode === 'feed' && (
          <Button size="xs" variant="light" onClick={() => refresh.mutate(scope)} loading={refresh.isPending} disabled={refresh.isPending}>
            {t('rates.refreshNow')}
          </Button>
        )}
      </Group>
      <ErrorAlert error={refresh.error ?? decide.error} />
    </Stack>
  );
}

/** The console's Rates screen: a card per currency; admins set up another currency. */
export function Rates() {
  const { t } = useI18n();
  const isAdmin = useIsAdmin();
  const rates = useRateSettings();
  const navigate = useNavigate();
  const [currency, setCurrency] = useState<string | null>(null);
  const list = rates.data?.rates ?? [];
  const unset = RATE_CURRENCIES.filter((c) => !list.some((r) => r.currency === c));
  return (
    <Stack>
      <Title order={2}>{t('nav.rates')}</Title>
      <Text size="sm" c="dimmed">
        {t('rates.intro')}
      </Text>
      <ErrorAlert error={rates.error} />
      {rates.data && list.length === 0 && <Text c="dimmed">{t('rates.none')}</Text>}
      <SimpleGrid cols={{ base: 1, md: 2, xl: 3 }}>
        {list.map((r) => (
          <Card withBorder key={r.currency} aria-label={`rate ${r.currency}`} padding="sm">
            <Group justify="space-between" mb={4}>
              <Anchor component={Link} to={`/rates/${r.currency}` as never} fw={700} size="lg">
                {r.currency}
              </Anchor>
            </Group>
            <RateSummary setting={r} scope={{ currency: r.currency }} answeredAt={rates.dataUpdatedAt}>
              <Button size="xs" variant="default" component={Link} to={`/rates/${r.currency}` as never}>
                {isAdmin ? t('rates.openEdit') : t('rates.open')}
              </Button>
            </RateSummary>
          </Card>
        ))}
      </SimpleGrid>
      {isAdmin && unset.length > 0 && (
        <Group align="flex-end">
          <Select label={t('rates.another')} data={unset} value={currency} onChange={setCurrency} w={160} />
          <Button variant="light" disabled={!currency} onClick={() => navigate({ to: `/rates/${currency}` as never })}>
            {t('rates.setUp')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

/** One currency's rate: its state, a chart of the last day, the last fetch's adverts, its refreshes, and (admins) the form. */
export function RateDetailPage() {
  const { t } = useI18n();
  const isAdmin = useIsAdmin();
  const { currency: given } = useParams({ strict: false }) as { currency: string };
  const currency = given.toUpperCase();
  const rates = useRateSettings();
  const setting = rates.data?.rates.find((r) => r.currency === currency);
  const scope = { currency };
  return (
    <Stack>
      <Anchor component={Link} to={'/rates' as never} size="sm">
        ← {t('nav.rates')}
      </Anchor>
      <Title order={2}>{t('rates.title', { currency })}</Title>
      <ErrorAlert error={rates.error} />
      {setting && (
        <Card withBorder padding="sm" aria-label={`rate ${currency}`}>
          <RateSummary setting={setting} scope={scope} answeredAt={rates.dataUpdatedAt} />
        </Card>
      )}
      {rates.data && !setting && <Text c="dimmed">{t('rates.notSet')}</Text>}
      {setting && <RateDetail scope={scope} />}
      {isAdmin && rates.data && (
        <Card withBorder padding="sm">
          <Title order={4} mb="xs">
            {t('rates.change')}
          </Title>
          <RateForm scope={scope} setting={setting} />
        </Card>
      )}
    </Stack>
  );
}

/** The chart of the last day, the last fetch's adverts per source, and the latest refreshes. */
export function RateDetail({ scope }: { scope: RateScope }) {
  const { t, f: i18nFormats } = useI18n();
  const history = useRateHistory(scope);
  if (history.error) return <ErrorAlert error={history.error} />;
  if (!history.data) return null;
  const h = history.data;
  const time = (iso: string) => i18nFormats.time(iso, true);
  const points = h.refreshes.filter((r) => r.rate !== null && r.kind !== 'held').map((r) => ({ at: time(r.at), rate: r.rate }));
  const recent = [...h.refreshes].reverse().slice(0, 12);
  return (
    <Stack>
      <Card withBorder padding="sm">
        <Text fw={600} mb="xs">
          {t('rates.chart')}
        </Text>
        {points.length > 0 ? (
          <LineChart
            h={220}
            data={points}
            dataKey="at"
            series={[{ name: 'rate', label: t('rates.rateShort'), color: 'blue.6' }]}
            curveType="stepAfter"
            withDots={points.length < 40}
            yAxisProps={{ domain: ['auto', 'auto'], width: 70 }}
            xAxisProps={{ minTickGap: 30 }}
            aria-label={t('rates.chart')}
          />
        ) : (
          <Text size="sm" c="dimmed">
            {t('rates.noPoints')}
          </Text>
        )}
      </Card>
      {h.last_sample && <LastSample history={h} />}
      <Card withBorder padding="sm">
        <Text fw={600} mb="xs">
          {t('rates.refreshes')}
        </Text>
        <DataTable
          rows={recent}
          rowKey={(r) => String(r.id)}
          minWidth={560}
          fz="xs"
          columns={[
            { header: t('rates.when'), cell: (r) => <When at={r.at} /> },
            {
              header: t('rates.what'),
              cell: (r) => (
                <>
                  {KINDS[r.kind] ? t(KINDS[r.kind]!) : r.kind}
                  {r.error && (
                    <Text span size="xs" c="red" style={{ overflowWrap: 'anywhere' }}>
                      {' '}
                      {r.error}
                    </Text>
                  )}
                </>
              ),
            },
            { header: t('rates.rateShort'), cell: (r) => <Money value={r.rate} /> },
            { header: t('rates.market'), cell: (r) => <Money value={r.figure} /> },
            { header: t('rates.who'), cell: (r) => r.actor ?? sourceLabel(r.source) ?? '—' },
          ]}
        />
      </Card>
    </Stack>
  );
}

/** The adverts the last fetch saw, per source: the ones used highlighted, the others with why they were left out. */
function LastSample({ history }: { history: RateHistory }) {
  const { t } = useI18n();
  const last = history.last_sample!;
  const sources: SampleSource[] = last.sample?.sources ?? [];
  return (
    <Card withBorder padding="sm">
      <Text fw={600}>{t('rates.adverts')}</Text>
      <Text size="xs" c="dimmed" mb="xs">
        <When at={last.at} /> · {KINDS[last.kind] ? t(KINDS[last.kind]!) : last.kind}
      </Text>
      <Stack>
        {sources.map((s) => (
          <Stack gap={4} key={s.source} aria-label={`adverts ${s.source}`}>
            <Group gap="xs">
              <Text fw={500}>{sourceLabel(s.source)}</Text>
              {s.figure !== undefined && (
                <Text size="sm">
                  {t('rates.figure')} <Money value={s.figure} />
                </Text>
              )}
              {s.left_out && <Badge color="orange">{t('rates.sourceLeftOut')}</Badge>}
            </Group>
            {s.error && (
              <Text size="sm" c="red" style={{ overflowWrap: 'anywhere' }}>
                {s.error}
              </Text>
            )}
            {s.adverts && s.adverts.length > 0 && (
              <DataTable
                // Adverts are kept as the exchange listed them: their place is their identity.
                rows={s.adverts.map((a, i) => ({ ...a, place: i + 1 }))}
                rowKey={(a) => String(a.place)}
                rowLabel={(a) => `advert ${a.price}${a.left_out ? ` ${a.left_out}` : ' used'}`}
                rowProps={(a) => ({ bg: a.left_out ? undefined : 'var(--mantine-color-green-light)' })}
                minWidth={640}
                fz="xs"
                striped={false}
                columns={[
                  { header: '#', cell: (a) => a.place },
                  {
                    header: t('rates.price'),
                    cell: (a) => (
                      <Text span inherit fw={a.left_out ? undefined : 600}>
                        <Money value={a.price} />
                      </Text>
                    ),
                  },
                  { header: t('rates.available'), cell: (a) => (a.available === null ? '—' : <Money value={a.available} currency="USDT" />) },
                  {
                    header: t('rates.limits'),
                    cell: (a) => (
                      <Text span inherit style={{ whiteSpace: 'nowrap' }}>
                        <Money value={a.min} /> – <Money value={a.max} />
                      </Text>
                    ),
                  },
                  { header: t('rates.payMethodsShort'), cell: (a) => a.pay_methods.join(', ') || '—' },
                  {
                    header: t('rates.trader'),
                    cell: (a) =>
                      a.trader ? (
                        <>
                          {a.trader.name}
                          <Text span size="xs" c="dimmed">
                            {a.trader.orders !== null && ` · ${t('rates.orders', { n: a.trader.orders })}`}
                            {a.trader.completion_percent !== null && ` · ${a.trader.completion_percent} %`}
                          </Text>
                        </>
                      ) : (
                        '—'
                      ),
                  },
                  {
                    header: t('rates.counted'),
                    cell: (a) =>
                      a.left_out ? (
                        <Text span size="xs" c="dimmed">
                          {LEFT_OUT[a.left_out] ? t(LEFT_OUT[a.left_out]!) : a.left_out}
                        </Text>
                      ) : (
                        <Badge size="xs" color="green">
                          {t('rates.used')}
                        </Badge>
                      ),
                  },
                ]}
              />
            )}
          </Stack>
        ))}
      </Stack>
    </Card>
  );
}

type Mode = 'inherit' | 'manual' | 'feed' | 'markup';

/** A NumberInput's value as a number, or undefined when empty. */
function numberOf(value: number | string): number | undefined {
  if (value === '' || value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

const blank = (v: number | null | undefined): number | string => (v === null || v === undefined ? '' : v);

/** The form's fields, from a setting (or empty). */
function formOf(setting: RateSetting | undefined, terminal: boolean) {
  const o = setting?.options ?? {};
  return {
    mode: (setting?.mode ?? (terminal ? 'inherit' : 'feed')) as Mode,
    rate: blank(setting?.mode === 'manual' ? setting.rate : undefined),
    source: setting?.source ?? 'bybit_p2p',
    markup: blank(setting && setting.mode !== 'manual' ? setting.markup_percent : undefined),
    payoutMarkup: blank(setting?.payout_markup_percent),
    refreshSeconds: blank(setting?.refresh_seconds ?? 30),
    maxAge: blank(setting?.max_age_seconds ?? 600),
    maxJump: blank(setting?.max_jump_percent),
    payMethods: Array.isArray(o.pay_methods) ? o.pay_methods.join(', ') : '',
    amount: blank(typeof o.amount === 'number' ? o.amount : typeof o.amount === 'string' ? Number(o.amount) : undefined),
    minOrders: blank(typeof o.min_orders === 'number' ? o.min_orders : undefined),
    minCompletion: blank(typeof o.min_completion_percent === 'number' ? o.min_completion_percent : undefined),
    baseUrl: typeof o.base_url === 'string' ? o.base_url : '',
    crossCheck: (setting?.cross_check ?? []).map((c) => c.source),
  };
}

type Form = ReturnType<typeof formOf>;

/** The body a feed's form asks for; options the form does not show (ranks, side…) are kept as they were. */
function feedBody(form: Form, setting: RateSetting | undefined): RateBody {
  const kept: RateOptions = setting?.mode === 'feed' && setting.source === form.source ? { ...setting.options } : {};
  for (const key of ['base_url', 'pay_methods', 'amount', 'min_orders', 'min_completion_percent']) delete kept[key];
  const payMethods = form.payMethods
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  const options: RateOptions = {
    ...kept,
    ...(form.baseUrl.trim() ? { base_url: form.baseUrl.trim() } : {}),
    ...(payMethods.length > 0 ? { pay_methods: payMethods } : {}),
    ...(numberOf(form.amount) !== undefined ? { amount: numberOf(form.amount) } : {}),
    ...(numberOf(form.minOrders) !== undefined ? { min_orders: numberOf(form.minOrders) } : {}),
    ...(numberOf(form.minCompletion) !== undefined ? { min_completion_percent: numberOf(form.minCompletion) } : {}),
  };
  return {
    source: form.source,
    markup_percent: numberOf(form.markup) ?? 0,
    payout_markup_percent: numberOf(form.payoutMarkup) ?? null,
    refresh_seconds: numberOf(form.refreshSeconds),
    max_age_seconds: numberOf(form.maxAge),
    max_jump_percent: numberOf(form.maxJump) ?? null,
    options,
    cross_check: form.crossCheck
      .filter((s) => s !== form.source)
      .map((source) => ({ source, options: setting?.cross_check.find((c) => c.source === source)?.options ?? {} })),
  };
}

/** The two markups a feed or a terminal's markup takes: on payments, and payouts' own. */
function MarkupInputs({ form, set }: { form: Form; set: (patch: Partial<Form>) => void }) {
  const { t } = useI18n();
  return (
    <>
      <NumberInput
        label={t('rates.markupPercent')}
        description={t('rates.markupPercentHelp')}
        value={form.markup}
        onChange={(v) => set({ markup: v })}
        decimalScale={4}
        hideControls
      />
      <NumberInput
        label={t('rates.payoutMarkupPercent')}
        description={t('rates.payoutMarkupHelp')}
        value={form.payoutMarkup}
        onChange={(v) => set({ payoutMarkup: v })}
        decimalScale={4}
        hideControls
      />
    </>
  );
}

/**
 * Types a rate or sets a feed (and for a terminal: follows the currency's rate, or the currency's
 * figure with its own markup). Admins only: the API refuses the others.
 */
export function RateForm({ scope, setting, onDone }: { scope: RateScope; setting: RateSetting | undefined; onDone?: () => void }) {
  const { t } = useI18n();
  const terminal = scope.terminalId !== undefined;
  const save = useSaveRate();
  const remove = useRemoveTerminalRate();
  const [form, setForm] = useState(() => formOf(setting, terminal));
  const [advanced, setAdvanced] = useState(false);
  const set = (patch: Partial<Form>) => setForm((f) => ({ ...f, ...patch }));
  const busy = save.isPending || remove.isPending;
  const modes: { value: Mode; label: string }[] = [
    ...(terminal ? [{ value: 'inherit' as Mode, label: t('rates.mode.inherit') }] : []),
    { value: 'manual', label: t('rates.mode.manual') },
    { value: 'feed', label: t('rates.mode.feed') },
    ...(terminal ? [{ value: 'markup' as Mode, label: t('rates.mode.markup') }] : []),
  ];
  const ready =
    form.mode === 'manual'
      ? (numberOf(form.rate) ?? 0) > 0
      : form.mode === 'markup'
        ? numberOf(form.markup) !== undefined
        : form.mode === 'feed'
          ? Boolean(form.source)
          : setting !== undefined;
  const submit = () => {
    const done = { onSuccess: () => onDone?.() };
    if (form.mode === 'inherit') {
      remove.mutate(scope, done);
      return;
    }
    const body: RateBody =
      form.mode === 'manual'
        ? { rate: numberOf(form.rate)! }
        : form.mode === 'markup'
          ? { markup_percent: numberOf(form.markup)!, payout_markup_percent: numberOf(form.payoutMarkup) ?? null }
          : feedBody(form, setting);
    save.mutate({ scope, body }, done);
  };
  const grid = { base: 1, xs: 2, md: 3 };
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        if (ready && !busy) submit();
      }}
    >
      <Stack gap="sm">
        <SegmentedControl
          value={form.mode}
          onChange={(value) => set({ mode: value as Mode })}
          data={modes}
          fullWidth
          orientation="horizontal"
          aria-label={t('rates.modeLabel')}
          styles={{ label: { whiteSpace: 'normal' } }}
        />
        {form.mode === 'inherit' && <Text size="sm">{setting ? t('rates.inheritHelp') : t('rates.inheritAlready')}</Text>}
        {form.mode === 'manual' && (
          <SimpleGrid cols={grid}>
            <NumberInput
              label={t('rates.rateTyped', { currency: scope.currency })}
              value={form.rate}
              onChange={(v) => set({ rate: v })}
              decimalScale={8}
              min={0}
              hideControls
            />
          </SimpleGrid>
        )}
        {form.mode === 'markup' && (
          <>
            <Text size="sm">{t('rates.markupHelp')}</Text>
            <SimpleGrid cols={grid}>
              <MarkupInputs form={form} set={set} />
            </SimpleGrid>
          </>
        )}
        {form.mode === 'feed' && (
          <>
            <SimpleGrid cols={grid}>
              <Select
                label={t('rates.source')}
                description={t('rates.sourceHelp')}
                data={SOURCES.map((s) => ({ value: s.value, label: s.label }))}
                value={form.source}
                onChange={(v) => set({ source: v ?? 'bybit_p2p' })}
                allowDeselect={false}
              />
              <MarkupInputs form={form} set={set} />
              <NumberInput
                label={t('rates.refreshSeconds')}
                description={t('rates.refreshHelp')}
                value={form.refreshSeconds}
                onChange={(v) => set({ refreshSeconds: v })}
                min={5}
                allowDecimal={false}
              />
              <NumberInput
                label={t('rates.maxAgeSeconds')}
                description={t('rates.maxAgeHelp')}
                value={form.maxAge}
                onChange={(v) => set({ maxAge: v })}
                min={10}
                allowDecimal={false}
              />
              <NumberInput
                label={t('rates.maxJumpPercent')}
                description={t('rates.maxJumpHelp')}
                value={form.maxJump}
                onChange={(v) => set({ maxJump: v })}
                decimalScale={4}
                min={0}
                hideControls
              />
              <TextInput
                label={t('rates.payMethods')}
                description={t('rates.payMethodsHelp')}
                value={form.payMethods}
                onChange={(e) => set({ payMethods: e.currentTarget.value })}
              />
              <NumberInput
                label={t('rates.amount', { currency: scope.currency })}
                description={t('rates.amountHelp')}
                value={form.amount}
                onChange={(v) => set({ amount: v })}
                decimalScale={2}
                min={0}
                hideControls
              />
              <MultiSelect
                label={t('rates.crossCheck')}
                description={t('rates.crossCheckHelp')}
                data={SOURCES.filter((s) => s.value !== form.source).map((s) => ({ value: s.value, label: s.label }))}
                value={form.crossCheck.filter((s) => s !== form.source)}
                onChange={(v) => set({ crossCheck: v })}
                clearable
              />
            </SimpleGrid>
            <Anchor component="button" type="button" size="sm" onClick={() => setAdvanced((a) => !a)} w="fit-content" aria-expanded={advanced}>
              {advanced ? '▾' : '▸'} {t('rates.advanced')}
            </Anchor>
            <Collapse expanded={advanced}>
              <SimpleGrid cols={grid}>
                <TextInput
                  label={t('rates.baseUrl')}
                  description={t('rates.baseUrlHelp')}
                  placeholder="https://…"
                  value={form.baseUrl}
                  onChange={(e) => set({ baseUrl: e.currentTarget.value })}
                />
                <NumberInput
                  label={t('rates.minOrders')}
                  description={t('rates.traderBarHelp')}
                  value={form.minOrders}
                  onChange={(v) => set({ minOrders: v })}
                  min={0}
                  allowDecimal={false}
                  hideControls
                />
                <NumberInput
                  label={t('rates.minCompletion')}
                  description={t('rates.traderBarHelp')}
                  value={form.minCompletion}
                  onChange={(v) => set({ minCompletion: v })}
                  min={0}
                  max={100}
                  hideControls
                />
              </SimpleGrid>
            </Collapse>
          </>
        )}
        <Group>
          <Button type="submit" loading={busy} disabled={!ready || busy}>
            {form.mode === 'inherit' ? t('rates.useCurrencys') : t('common.save')}
          </Button>
        </Group>
        <ErrorAlert error={save.error ?? remove.error} />
      </Stack>
    </form>
  );
}

/** How a terminal prices a currency, in a word: its own typed rate, its own feed, the currency's with its markup, or the currency's. */
function terminalOrigin(own: RateSetting | undefined, effective: EffectiveRate | undefined, { t, lang }: I18n): string {
  if (!own) return `${t('rates.currencys')}${effective?.source ? ` · ${sourceLabel(effective.source)}` : ''}`;
  if (own.mode === 'manual') return t('rates.ownTyped');
  const payout = own.payout_markup_percent === null ? '' : ` · ${t('rates.payoutMarkup')} ${signedPercent(own.payout_markup_percent, lang)}`;
  if (own.mode === 'markup') return `${t('rates.currencys')} · ${t('rates.markup')} ${signedPercent(own.markup_percent, lang)}${payout}`;
  return `${t('rates.ownFeed')} · ${sourceLabel(own.source)} · ${t('rates.markup')} ${signedPercent(own.markup_percent, lang)}${payout}`;
}

/**
 * A terminal's rates on the merchant screen: what it prices each currency with now (its own
 * setting or the currency's), and (admins) a dialog to change one.
 */
export function TerminalRates({ terminalId, name }: { terminalId: string; name: string }) {
  const i18n = useI18n();
  const { t } = i18n;
  const isAdmin = useIsAdmin();
  const rates = useTerminalRates(terminalId);
  const phone = useMediaQuery('(max-width: 48em)');
  const [editing, setEditing] = useState<string | null>(null);
  const [details, setDetails] = useState<string | null>(null);
  const [another, setAnother] = useState<string | null>(null);
  const own = rates.data?.rates ?? [];
  const effective = rates.data?.effective ?? [];
  const currencies = [...new Set([...effective.map((e) => e.currency), ...own.map((o) => o.currency)])].sort();
  const unset = RATE_CURRENCIES.filter((c) => !currencies.includes(c));
  const editingSetting = own.find((o) => o.currency === editing);
  const editingEffective = effective.find((e) => e.currency === editing);
  const detailSetting = own.find((o) => o.currency === details);
  return (
    <Stack gap="xs" aria-label={`terminal rates ${name}`}>
      <Text fw={500}>{t('rates.terminalTitle')}</Text>
      <ErrorAlert error={rates.error} />
      <DataTable
        rows={currencies}
        rowKey={(currency) => currency}
        rowLabel={(currency) => `terminal rate ${currency}`}
        minWidth={600}
        fz="sm"
        columns={[
          {
            header: t('rates.currency'),
            cell: (currency) => (
              <Text span inherit fw={600}>
                {currency}
              </Text>
            ),
          },
          { header: t('rates.rateShort'), cell: (currency) => <Money value={effective.find((x) => x.currency === currency)?.rate} /> },
          { header: t('rates.payoutRate'), cell: (currency) => <Money value={effective.find((x) => x.currency === currency)?.payout_rate} /> },
          {
            header: t('rates.origin'),
            cell: (currency) => (
              <Text size="xs">
                {terminalOrigin(
                  own.find((x) => x.currency === currency),
                  effective.find((x) => x.currency === currency),
                  i18n,
                )}
              </Text>
            ),
          },
          {
            header: t('rates.stateLabel'),
            cell: (currency) => {
              const e = effective.find((x) => x.currency === currency);
              const o = own.find((x) => x.currency === currency);
              return o && o.mode === 'feed' ? (
                <RateStateBadge state={o.state} />
              ) : e?.stale ? (
                <RateStateBadge state="stale" />
              ) : (
                <Badge color="green" variant="light">
                  {t('rates.usable')}
                </Badge>
              );
            },
          },
          {
            header: '',
            cell: (currency) => {
              const o = own.find((x) => x.currency === currency);
              return (
                <Group gap={4} wrap="nowrap">
                  {o && o.mode === 'feed' && (
                    <Button size="compact-xs" variant="default" onClick={() => setDetails(currency)}>
                      {t('rates.open')}
                    </Button>
                  )}
                  {isAdmin && (
                    <Button size="compact-xs" variant="light" onClick={() => setEditing(currency)}>
                      {t('rates.changeShort')}
                    </Button>
                  )}
                </Group>
              );
            },
          },
        ]}
      />
      {isAdmin && unset.length > 0 && (
        <Group align="flex-end" gap="xs">
          <Select size="xs" aria-label={t('rates.another')} placeholder={t('rates.another')} data={unset} value={another} onChange={setAnother} w={170} />
          <Button size="xs" variant="light" disabled={!another} onClick={() => setEditing(another)}>
            {t('rates.setUp')}
          </Button>
        </Group>
      )}
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={t('rates.terminalEdit', { currency: editing ?? '', terminal: name })}
        size="xl"
        fullScreen={phone}
      >
        {editing && (
          <Stack>
            {editingEffective && (
              <Text size="sm">
                {t('rates.terminalNow')} <Money value={editingEffective.rate} currency={editing} /> · {t('rates.payoutMarkup')}{' '}
                <Money value={editingEffective.payout_rate} currency={editing} />
              </Text>
            )}
            {editingSetting && editingSetting.mode !== 'markup' && (
              <RateSummary setting={editingSetting} scope={{ terminalId, currency: editing }} answeredAt={rates.dataUpdatedAt} />
            )}
            <RateForm key={editing} scope={{ terminalId, currency: editing }} setting={editingSetting} onDone={() => setEditing(null)} />
          </Stack>
        )}
      </Modal>
      <Modal
        opened={details !== null}
        onClose={() => setDetails(null)}
        title={t('rates.terminalDetail', { currency: details ?? '', terminal: name })}
        size="xl"
        fullScreen={phone}
      >
        {details && detailSetting && (
          <Stack>
            <RateSummary setting={detailSetting} scope={{ terminalId, currency: details }} answeredAt={rates.dataUpdatedAt} />
            <RateDetail scope={{ terminalId, currency: details }} />
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}
