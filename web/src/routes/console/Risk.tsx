import { BarChart } from '@mantine/charts';
import { Anchor, Badge, Button, Card, Group, Modal, NumberInput, Select, SimpleGrid, Stack, Tabs, Text, Textarea, TextInput, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { type FormEvent, useEffect, useState } from 'react';
import { useMe } from '../../api/auth';
import { useMerchants } from '../../api/merchants';
import {
  BLOCK_KINDS,
  type BlockKind,
  type BlockView,
  type LimitView,
  RISK_RULES,
  type RiskHitView,
  riskHitsExportPath,
  useAddBlock,
  useRemoveBlock,
  useRequisiteVelocity,
  useRiskBlocks,
  useRiskClasses,
  useRiskHits,
  useRiskLimits,
  useRiskSummary,
  useSaveClasses,
  useSaveLimit,
  useSaveRequisiteVelocity,
  useSettleHit,
} from '../../api/risk';
import { ConfirmAction } from '../../components/ConfirmAction';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert, useFieldError } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Pager } from '../../components/Pager';
import { usePhone } from '../../components/usePhone';
import { type Filters, pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { type MessageKey, useI18n } from '../../i18n';
import { useRiskNames } from './riskNames';

const PAGE = 50;
const RULE_COLORS: Record<string, string> = {
  block: 'red.6',
  velocity: 'orange.6',
  traffic_class: 'yellow.6',
  receipt_reused: 'grape.6',
  reference_reused: 'violet.6',
  payer_name: 'blue.6',
};

/** A number field's value as the API takes it: empty is "no limit" (null). */
const numberOrNull = (value: string | number) => (value === '' || value === undefined ? null : Number(value));

/** One velocity limit (per client_id, or per payer IP): the window and the most payments or amount in it. */
function LimitForm({ scope, limit }: { scope: LimitView['scope']; limit: LimitView | undefined }) {
  const { t } = useI18n();
  const save = useSaveLimit();
  const fieldError = useFieldError(save.error);
  const [windowSeconds, setWindowSeconds] = useState<string | number>(limit?.window_seconds ?? 600);
  const [maxPayments, setMaxPayments] = useState<string | number>(limit?.max_payments ?? '');
  const [maxAmount, setMaxAmount] = useState<string | number>(limit?.max_amount ?? '');
  useEffect(() => {
    if (!limit) return;
    setWindowSeconds(limit.window_seconds);
    setMaxPayments(limit.max_payments ?? '');
    setMaxAmount(limit.max_amount ?? '');
  }, [limit]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ scope, window_seconds: Number(windowSeconds), max_payments: numberOrNull(maxPayments), max_amount: numberOrNull(maxAmount) });
  };
  const title = t(scope === 'ip' ? 'risk.limitIp' : 'risk.limitClient');
  return (
    <Card withBorder component="form" onSubmit={submit} aria-label={title}>
      <Stack gap="xs">
        <Text fw={500}>{title}</Text>
        <NumberInput
          label={t('risk.windowSeconds')}
          value={windowSeconds}
          onChange={setWindowSeconds}
          min={1}
          allowDecimal={false}
          error={fieldError('window_seconds')}
          required
        />
        <NumberInput
          label={t('risk.maxPayments')}
          value={maxPayments}
          onChange={setMaxPayments}
          min={1}
          allowDecimal={false}
          error={fieldError('max_payments')}
        />
        <NumberInput label={t('risk.maxAmount')} value={maxAmount} onChange={setMaxAmount} min={0} error={fieldError('max_amount')} />
        <ErrorAlert error={save.error} onFields={['window_seconds', 'max_payments', 'max_amount']} />
        {save.isSuccess && !save.isPending && (
          <Text size="sm" c="teal" role="status">
            {t('risk.saved')}
          </Text>
        )}
        <Button type="submit" loading={save.isPending} disabled={save.isPending} w="fit-content">
          {t('common.save')}
        </Button>
      </Stack>
    </Card>
  );
}

/** The payers' traffic classes: from how many completed payments with a merchant a payer is returning, and trusted. */
function ClassesForm() {
  const { t } = useI18n();
  const classes = useRiskClasses();
  const save = useSaveClasses();
  const fieldError = useFieldError(save.error);
  const [returning, setReturning] = useState<string | number>(1);
  const [trusted, setTrusted] = useState<string | number>(10);
  useEffect(() => {
    if (!classes.data) return;
    setReturning(classes.data.returning_from);
    setTrusted(classes.data.trusted_from);
  }, [classes.data]);
  return (
    <Card
      withBorder
      component="form"
      aria-label={t('risk.classes')}
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        save.mutate({ returning_from: Number(returning), trusted_from: Number(trusted) });
      }}
    >
      <Stack gap="xs">
        <Text fw={500}>{t('risk.classes')}</Text>
        <Text size="xs" c="dimmed">
          {t('risk.classesHint')}
        </Text>
        <NumberInput
          label={t('risk.returningFrom')}
          value={returning}
          onChange={setReturning}
          min={1}
          allowDecimal={false}
          error={fieldError('returning_from')}
          required
        />
        <NumberInput
          label={t('risk.trustedFrom')}
          value={trusted}
          onChange={setTrusted}
          min={2}
          allowDecimal={false}
          error={fieldError('trusted_from')}
          required
        />
        <ErrorAlert error={classes.error ?? save.error} onFields={['returning_from', 'trusted_from']} />
        <Button type="submit" loading={save.isPending} disabled={save.isPending} w="fit-content">
          {t('common.save')}
        </Button>
      </Stack>
    </Card>
  );
}

/** The requisite velocity: at most so many hand-outs, and so much money, per requisite in sliding windows. */
function RequisiteVelocityForm() {
  const { t } = useI18n();
  const velocity = useRequisiteVelocity();
  const save = useSaveRequisiteVelocity();
  const fieldError = useFieldError(save.error);
  const [payments, setPayments] = useState<string | number>('');
  const [paymentsWindow, setPaymentsWindow] = useState<string | number>(3600);
  const [amount, setAmount] = useState<string | number>('');
  const [amountWindow, setAmountWindow] = useState<string | number>(86400);
  useEffect(() => {
    const v = velocity.data;
    if (!v) return;
    setPayments(v.payments?.max ?? '');
    setPaymentsWindow(v.payments?.window_seconds ?? 3600);
    setAmount(v.amount?.max ?? '');
    setAmountWindow(v.amount?.window_seconds ?? 86400);
  }, [velocity.data]);
  const limit = (max: string | number, window: string | number) => (max === '' ? null : { max: Number(max), window_seconds: Number(window) });
  return (
    <Card
      withBorder
      component="form"
      aria-label={t('risk.requisiteVelocity')}
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        save.mutate({ payments: limit(payments, paymentsWindow), amount: limit(amount, amountWindow) });
      }}
    >
      <Stack gap="xs">
        <Text fw={500}>{t('risk.requisiteVelocity')}</Text>
        <Group grow align="flex-start">
          <NumberInput label={t('risk.maxPayments')} value={payments} onChange={setPayments} min={1} allowDecimal={false} error={fieldError('payments')} />
          <NumberInput label={t('risk.windowSeconds')} value={paymentsWindow} onChange={setPaymentsWindow} min={1} allowDecimal={false} />
        </Group>
        <Group grow align="flex-start">
          <NumberInput label={t('risk.maxAmount')} value={amount} onChange={setAmount} min={0} error={fieldError('amount')} />
          <NumberInput label={t('risk.windowSeconds')} value={amountWindow} onChange={setAmountWindow} min={1} allowDecimal={false} />
        </Group>
        <ErrorAlert error={velocity.error ?? save.error} onFields={['payments', 'amount']} />
        <Button type="submit" loading={save.isPending} disabled={save.isPending} w="fit-content">
          {t('common.save')}
        </Button>
      </Stack>
    </Card>
  );
}

function RulesTab() {
  const limits = useRiskLimits();
  const find = (scope: LimitView['scope']) => limits.data?.limits.find((l) => l.scope === scope);
  return (
    <Stack>
      <ErrorAlert error={limits.error} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <LimitForm scope="client_id" limit={find('client_id')} />
        <LimitForm scope="ip" limit={find('ip')} />
        <ClassesForm />
        <RequisiteVelocityForm />
      </SimpleGrid>
    </Stack>
  );
}

/** The merchants as choices: "every merchant" first (a block without a merchant holds for all). */
function useMerchantOptions() {
  const merchants = useMerchants();
  return (merchants.data?.merchants ?? []).map((m) => ({ value: m.id, label: m.name }));
}

/** A new block: what (kind and value), for whom (one merchant or all), why, until when. */
function AddBlockDialog({ opened, onClose }: { opened: boolean; onClose(): void }) {
  const { t } = useI18n();
  const names = useRiskNames();
  const add = useAddBlock();
  const fieldError = useFieldError(add.error);
  const merchants = useMerchantOptions();
  const [kind, setKind] = useState<BlockKind>('client_id');
  const [value, setValue] = useState('');
  const [merchant, setMerchant] = useState<string | null>(null);
  const [reason, setReason] = useState('');
  const [expires, setExpires] = useState('');
  useEffect(() => {
    if (!opened) return;
    add.reset();
    setValue('');
    setReason('');
    setExpires('');
  }, [opened, add.reset]);
  return (
    <Modal opened={opened} onClose={onClose} title={t('risk.addBlock')} centered>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          add.mutate(
            { kind, value: value.trim(), merchant_id: merchant, reason: reason.trim(), expires_at: expires ? new Date(expires).toISOString() : null },
            { onSuccess: onClose },
          );
        }}
      >
        <Stack>
          <Select
            label={t('risk.kind')}
            data={BLOCK_KINDS.map((k) => ({ value: k, label: names.kind(k) }))}
            value={kind}
            onChange={(v) => v && setKind(v as BlockKind)}
            allowDeselect={false}
            error={fieldError('kind')}
          />
          <TextInput label={t('risk.value')} value={value} onChange={(e) => setValue(e.currentTarget.value)} required error={fieldError('value')} />
          <Select
            label={t('risk.merchant')}
            placeholder={t('risk.everyMerchant')}
            data={merchants}
            value={merchant}
            onChange={setMerchant}
            clearable
            searchable
            error={fieldError('merchant_id')}
          />
          <Textarea
            label={t('action.reason')}
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            required
            autosize
            minRows={2}
            error={fieldError('reason')}
          />
          <TextInput
            type="datetime-local"
            label={t('risk.expiresAt')}
            description={t('risk.expiresHint')}
            value={expires}
            onChange={(e) => setExpires(e.currentTarget.value)}
            error={fieldError('expires_at')}
          />
          <ErrorAlert error={add.error} onFields={['kind', 'value', 'merchant_id', 'reason', 'expires_at']} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('action.back')}
            </Button>
            <Button type="submit" color="red" loading={add.isPending} disabled={add.isPending || value.trim() === '' || reason.trim() === ''}>
              {t('risk.block')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function BlocksTab({ filters, setFilters }: { filters: Filters; setFilters(changes: Filters): void }) {
  const { t } = useI18n();
  const names = useRiskNames();
  const merchants = useMerchantOptions();
  const merchantName = (id: string | null) => (id ? (merchants.find((m) => m.value === id)?.label ?? id) : t('risk.everyMerchant'));
  const page = pageOf(filters, PAGE);
  const active = filters.active ?? 'true';
  const blocks = useRiskBlocks({ kind: filters.kind, merchant_id: filters.merchant_id, active: active === 'all' ? undefined : active, ...page });
  const remove = useRemoveBlock();
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<BlockView | null>(null);
  const rows = blocks.data?.blocks ?? [];
  return (
    <Stack>
      <ListHeader
        title={t('risk.blocks')}
        status={{
          value: active,
          options: [
            { value: 'true', label: t('risk.active') },
            { value: 'false', label: t('risk.inactive') },
            { value: 'all', label: t('common.all') },
          ],
          onChange: (value) => setFilters({ active: value === 'true' ? undefined : value }),
        }}
      >
        <Select
          label={t('risk.kind')}
          data={BLOCK_KINDS.map((k) => ({ value: k, label: names.kind(k) }))}
          value={filters.kind ?? null}
          onChange={(v) => setFilters({ kind: v ?? undefined })}
          clearable
          w={{ base: '100%', sm: 180 }}
        />
        <Select
          label={t('risk.merchant')}
          data={merchants}
          value={filters.merchant_id ?? null}
          onChange={(v) => setFilters({ merchant_id: v ?? undefined })}
          clearable
          searchable
          w={{ base: '100%', sm: 220 }}
        />
      </ListHeader>
      <Button onClick={() => setAdding(true)} w="fit-content" color="red" variant="light">
        {t('risk.addBlock')}
      </Button>
      <ErrorAlert error={blocks.error} />
      <DataTable
        rows={rows}
        loaded={blocks.isSuccess}
        rowKey={(row) => row.id}
        rowLabel={(row) => `${names.kind(row.kind)} ${row.value_shown}`}
        columns={[
          { header: t('risk.kind'), cell: (row) => names.kind(row.kind) },
          {
            header: t('risk.value'),
            cell: (row) => (
              <Text size="sm" ff="monospace" span>
                {row.value_shown}
              </Text>
            ),
          },
          { header: t('risk.merchant'), cell: (row) => merchantName(row.merchant_id) },
          { header: t('action.reason'), cell: (row) => row.reason, wide: true },
          { header: t('risk.expiresAt'), cell: (row) => (row.expires_at ? <When at={row.expires_at} /> : t('risk.never')) },
          { header: t('risk.createdBy'), cell: (row) => row.created_by },
          {
            header: '',
            wide: true,
            cell: (row) =>
              row.active !== false && (
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => {
                    remove.reset();
                    setRemoving(row);
                  }}
                >
                  {t('risk.remove')}
                </Button>
              ),
          },
        ]}
      />
      <Pager offset={page.offset} limit={PAGE} count={rows.length} total={blocks.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
      <AddBlockDialog opened={adding} onClose={() => setAdding(false)} />
      <ConfirmAction
        opened={removing !== null}
        title={t('risk.removeTitle')}
        action={t('risk.remove')}
        busy={remove.isPending}
        error={remove.error}
        onClose={() => setRemoving(null)}
        onConfirm={() => removing && remove.mutate(removing.id, { onSuccess: () => setRemoving(null) })}
      >
        {removing && `${names.kind(removing.kind)} ${removing.value_shown} · ${merchantName(removing.merchant_id)}`}
      </ConfirmAction>
    </Stack>
  );
}

/** Hits per hour over the last day, one colour per rule, stacked. */
function HitsChart() {
  const { t, f } = useI18n();
  const names = useRiskNames();
  const summary = useRiskSummary(24);
  const s = summary.data;
  const total = s ? Object.values(s.totals).reduce((sum, n) => sum + n, 0) : 0;
  return (
    <Card withBorder aria-label={t('risk.chart')}>
      <Text fw={500} mb="sm">
        {t('risk.chart')}: {f.number(total)}
      </Text>
      <ErrorAlert error={summary.error} />
      {s && (
        <BarChart
          h={200}
          type="stacked"
          data={s.series.map((bucket) => ({
            at: f.time(bucket.at),
            ...Object.fromEntries(s.rules.map((rule) => [names.rule(rule), bucket.by_rule[rule] ?? 0])),
          }))}
          dataKey="at"
          series={s.rules.map((rule) => ({ name: names.rule(rule), color: RULE_COLORS[rule] ?? 'gray.6' }))}
          withLegend
        />
      )}
    </Card>
  );
}

/** The hits' columns, shared by the Risk screen and the lists on a payment's or a dispute's card. */
export function useHitColumns(onSettle?: (hit: RiskHitView) => void) {
  const { t } = useI18n();
  const names = useRiskNames();
  return [
    { header: t('risk.at'), cell: (row: RiskHitView) => <When at={row.created_at} /> },
    { header: t('risk.rule'), cell: (row: RiskHitView) => names.rule(row.rule) },
    {
      header: t('risk.actionHead'),
      cell: (row: RiskHitView) => (
        <Badge color={row.action === 'refused' ? 'red' : 'orange'} variant="light">
          {names.action(row.action)}
        </Badge>
      ),
    },
    {
      header: t('risk.figure'),
      wide: true,
      cell: (row: RiskHitView) => (
        <Text size="sm" ff="monospace" span>
          {row.figure}
        </Text>
      ),
    },
    { header: t('risk.merchant'), cell: (row: RiskHitView) => row.merchant_name ?? row.merchant_id },
    {
      header: t('risk.object'),
      cell: (row: RiskHitView) =>
        row.payment_id ? (
          <Anchor component={Link} to={`/payments/${row.payment_id}` as never} size="sm">
            {row.payment_id.slice(0, 8)}
          </Anchor>
        ) : (
          (row.payout_id ?? row.dispute_id)?.slice(0, 8)
        ),
    },
    {
      header: t('risk.settled'),
      wide: true,
      cell: (row: RiskHitView) =>
        row.settled_at ? (
          <Text size="sm">
            <When at={row.settled_at} /> · {row.settled_by}
          </Text>
        ) : row.action === 'flagged' && onSettle ? (
          <Button size="xs" onClick={() => onSettle(row)}>
            {t('risk.settle')}
          </Button>
        ) : (
          <Text size="sm" c="dimmed">
            {t('risk.waiting')}
          </Text>
        ),
    },
  ];
}

/** "Settle": a person looked at the flag; a comment is optional. */
export function SettleDialog({ hit, onClose }: { hit: RiskHitView | null; onClose(): void }) {
  const { t } = useI18n();
  const names = useRiskNames();
  const settle = useSettleHit();
  const [comment, setComment] = useState('');
  useEffect(() => {
    if (hit) {
      settle.reset();
      setComment('');
    }
  }, [hit, settle.reset]);
  return (
    <Modal opened={hit !== null} onClose={onClose} title={t('risk.settleTitle')} centered>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (hit) settle.mutate({ id: hit.id, comment: comment.trim() || undefined }, { onSuccess: onClose });
        }}
      >
        <Stack>
          {hit && (
            <Text size="sm">
              {names.rule(hit.rule)} · <code>{hit.figure}</code>
            </Text>
          )}
          <Textarea label={t('risk.comment')} value={comment} onChange={(e) => setComment(e.currentTarget.value)} autosize minRows={2} maxLength={1000} />
          <ErrorAlert error={settle.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('action.back')}
            </Button>
            <Button type="submit" loading={settle.isPending} disabled={settle.isPending}>
              {t('risk.settle')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function HitsTab({ filters, setFilters }: { filters: Filters; setFilters(changes: Filters): void }) {
  const { t } = useI18n();
  const names = useRiskNames();
  const merchants = useMerchantOptions();
  const page = pageOf(filters, PAGE);
  const shown = { rule: filters.rule, action: filters.action, merchant_id: filters.merchant_id, unsettled: filters.unsettled };
  const hits = useRiskHits({ ...shown, ...page });
  const [settling, setSettling] = useState<RiskHitView | null>(null);
  const columns = useHitColumns(setSettling);
  const rows = hits.data?.hits ?? [];
  return (
    <Stack>
      <HitsChart />
      <ListHeader
        title={t('risk.hits')}
        csvLink={
          <Anchor href={riskHitsExportPath(shown)} download size="sm">
            {t('common.exportCsv')}
          </Anchor>
        }
      >
        <Select
          label={t('risk.rule')}
          data={RISK_RULES.map((rule) => ({ value: rule, label: names.rule(rule) }))}
          value={filters.rule ?? null}
          onChange={(v) => setFilters({ rule: v ?? undefined })}
          clearable
          w={{ base: '100%', sm: 200 }}
        />
        <Select
          label={t('risk.actionHead')}
          data={['refused', 'flagged'].map((a) => ({ value: a, label: names.action(a) }))}
          value={filters.action ?? null}
          onChange={(v) => setFilters({ action: v ?? undefined })}
          clearable
          w={{ base: '100%', sm: 160 }}
        />
        <Select
          label={t('risk.merchant')}
          data={merchants}
          value={filters.merchant_id ?? null}
          onChange={(v) => setFilters({ merchant_id: v ?? undefined })}
          clearable
          searchable
          w={{ base: '100%', sm: 220 }}
        />
        <Select
          label={t('risk.settled')}
          data={[{ value: 'true', label: t('risk.unsettledOnly') }]}
          value={filters.unsettled ?? null}
          onChange={(v) => setFilters({ unsettled: v ?? undefined })}
          clearable
          w={{ base: '100%', sm: 200 }}
        />
      </ListHeader>
      <ErrorAlert error={hits.error} />
      <DataTable rows={rows} loaded={hits.isSuccess} rowKey={(row) => row.id} rowLabel={(row) => `${names.rule(row.rule)} ${row.figure}`} columns={columns} />
      <Pager offset={page.offset} limit={PAGE} count={rows.length} total={hits.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
      <SettleDialog hit={settling} onClose={() => setSettling(null)} />
    </Stack>
  );
}

const TABS: { value: string; label: MessageKey }[] = [
  { value: 'hits', label: 'risk.tab.hits' },
  { value: 'blocks', label: 'risk.tab.blocks' },
  { value: 'rules', label: 'risk.tab.rules' },
];

/** Risk: what the rules refused and flagged (hits over time, settle a flag), the payer blocks, and the rules' settings; the tab and filters in the URL. */
export function Risk() {
  const { t } = useI18n();
  const me = useMe();
  const phone = usePhone();
  const [filters, setFilters] = useUrlFilters();
  const tab = TABS.some((x) => x.value === filters.tab) ? filters.tab! : 'hits';
  return (
    <Stack>
      <Title order={2}>{t('nav.risk')}</Title>
      <Tabs
        value={tab}
        // A tab is its own list: its filters do not carry over.
        onChange={(value) =>
          setFilters({
            tab: value === 'hits' ? undefined : (value ?? undefined),
            rule: undefined,
            action: undefined,
            merchant_id: undefined,
            unsettled: undefined,
            kind: undefined,
            active: undefined,
          })
        }
        keepMounted={false}
      >
        <Tabs.List grow={phone}>
          {TABS.map((x) => (
            <Tabs.Tab key={x.value} value={x.value}>
              {t(x.label)}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="hits" pt="md">
          <HitsTab filters={filters} setFilters={setFilters} />
        </Tabs.Panel>
        <Tabs.Panel value="blocks" pt="md">
          <BlocksTab filters={filters} setFilters={setFilters} />
        </Tabs.Panel>
        <Tabs.Panel value="rules" pt="md">
          {me.data && <RulesTab />}
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
