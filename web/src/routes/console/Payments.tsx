import { Anchor, Button, Card, Code, Group, Select, Stack, Table, Text, TextInput, Timeline, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { type ReactNode, useState } from 'react';
import { useApiBase, useArea } from '../../api/area';
import { useExecutors } from '../../api/executors';
import { useMerchantMe } from '../../api/merchant';
import { useMerchants } from '../../api/merchants';
import { type PaymentView, paymentsCsvPath, type TimelineItem, useCancelPayment, usePayment, usePayments, usePaymentTimeline } from '../../api/payments';
import { ConfirmAction } from '../../components/ConfirmAction';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { RiskFlagBadges } from '../../components/RiskFlagBadge';
import { StatusBadge, useStatusName } from '../../components/StatusBadge';
import { useStatementLine } from '../../components/statementLine';
import { TestBadge } from '../../components/TestBadge';
import { useNames } from '../../components/useNames';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';
import { MerchantPaymentActions } from '../merchant/PaymentActions';
import { BlockPayer, RiskHitsCard } from './BlockPayer';
import { useRiskNames } from './riskNames';

const LIMIT = 50;
const STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL', 'CANCELLED', 'CANCELLED_APPEAL', 'DISPUTE'];
const METHODS = ['CARD', 'SBP', 'SBP_QR', 'PHONE', 'SIM', 'CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM', 'VIET_QR'];

type Filters = ReturnType<typeof useUrlFilters>[0];
type SetFilters = ReturnType<typeof useUrlFilters>[1];

/** The operator narrows by merchant and by executor. */
function OperatorFilters({ filters, setFilters }: { filters: Filters; setFilters: SetFilters }) {
  const { t } = useI18n();
  const merchants = useMerchants();
  const executors = useExecutors();
  return (
    <>
      <Select
        label={t('nav.merchants')}
        data={(merchants.data?.merchants ?? []).map((m) => ({ value: m.id, label: m.name }))}
        value={filters.merchant_id ?? null}
        onChange={(v) => setFilters({ merchant_id: v ?? undefined })}
        clearable
        searchable
        w={180}
      />
      <Select
        label={t('nav.executors')}
        data={(executors.data?.executors ?? []).map((e) => ({ value: e.id, label: e.name }))}
        value={filters.executor_id ?? null}
        onChange={(v) => setFilters({ executor_id: v ?? undefined })}
        clearable
        searchable
        w={180}
      />
    </>
  );
}

/** A merchant narrows by its own terminals. */
function TerminalFilter({ filters, setFilters }: { filters: Filters; setFilters: SetFilters }) {
  const { t } = useI18n();
  const me = useMerchantMe();
  return (
    <Select
      label={t('merchant.terminal')}
      data={(me.data?.terminals ?? []).map((terminal) => ({ value: terminal.id, label: terminal.name }))}
      value={filters.terminal_id ?? null}
      onChange={(v) => setFilters({ terminal_id: v ?? undefined })}
      clearable
      w={180}
    />
  );
}

/** Payments: one search box (id, ext_id, amount, requisite digits, client id) and filters, all in the URL; CSV of the same view. */
export function Payments() {
  const { t } = useI18n();
  const { statusName } = useStatusName();
  const names = useNames();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, LIMIT);
  const query = {
    q: filters.q,
    status: filters.status,
    method: filters.method,
    merchant_id: filters.merchant_id,
    terminal_id: filters.terminal_id,
    executor_id: filters.executor_id,
    from: filters.from,
    to: filters.to,
  };
  const list = usePayments({ ...query, limit: String(page.limit), offset: String(page.offset) });
  const area = useArea();
  const base = useApiBase();
  const rows = list.data?.payments ?? [];
  return (
    <Stack>
      <ListHeader
        title={t('payments.title')}
        csvLink={
          <Anchor href={paymentsCsvPath(base, query)} download size="sm">
            {t('common.exportCsv')}
          </Anchor>
        }
      >
        <TextInput
          label={t('common.search')}
          placeholder={t('payments.search')}
          defaultValue={filters.q}
          onChange={(e) => setFilters({ q: e.currentTarget.value.trim() })}
          w={360}
        />
        <Select
          label={t('common.status')}
          data={STATUSES.map((value) => ({ value, label: statusName(value) }))}
          value={filters.status ?? null}
          onChange={(v) => setFilters({ status: v ?? undefined })}
          clearable
          w={170}
        />
        <Select
          label={t('payments.method')}
          data={METHODS.map((value) => ({ value, label: names.method(value) }))}
          value={filters.method ?? null}
          onChange={(v) => setFilters({ method: v ?? undefined })}
          clearable
          w={150}
        />
        {area === 'console' ? <OperatorFilters filters={filters} setFilters={setFilters} /> : <TerminalFilter filters={filters} setFilters={setFilters} />}
        <TextInput
          label={t('common.from')}
          type="datetime-local"
          defaultValue={filters.from?.slice(0, 16)}
          onChange={(e) => setFilters({ from: e.currentTarget.value ? new Date(e.currentTarget.value).toISOString() : undefined })}
        />
        <TextInput
          label={t('common.to')}
          type="datetime-local"
          defaultValue={filters.to?.slice(0, 16)}
          onChange={(e) => setFilters({ to: e.currentTarget.value ? new Date(e.currentTarget.value).toISOString() : undefined })}
        />
      </ListHeader>
      <ErrorAlert error={list.error} />
      <DataTable
        rows={rows}
        loaded={list.isSuccess}
        rowKey={(p) => p.id}
        rowLabel={(p) => `payment ${p.ext_id}`}
        columns={[
          {
            header: t('payments.field.ext_id'),
            cell: (p) => (
              <Group gap={6} wrap="nowrap">
                <Anchor component={Link} to={`/payments/${p.id}` as never}>
                  {p.ext_id}
                </Anchor>
                <TestBadge show={p.is_test === true} />
              </Group>
            ),
          },
          { header: t('common.amount'), cell: (p) => <Money value={p.amount} currency={p.currency} /> },
          { header: t('payments.method'), cell: (p) => names.method(p.method) },
          { header: t('common.status'), cell: (p) => <StatusBadge status={p.status} /> },
          { header: t('common.created'), cell: (p) => <When at={p.created_at} /> },
        ]}
      />
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} total={list.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}

/** The fields of a history item worth a line, in words: a status change as "pending → completed", a posting by its name, the rest as the API gave them. */
function Details({ item }: { item: TimelineItem }) {
  const { statusName } = useStatusName();
  const line = useStatementLine();
  const names = useNames();
  const risk = useRiskNames();
  const { at: _at, kind, entries, ...rest } = item as TimelineItem & { entries?: { account: string; owner_type: string | null; amount: string }[] };
  if (kind === 'risk_hit') {
    return (
      <Text size="sm">
        {risk.rule(String(rest.rule))} · {risk.action(String(rest.action))} · <Code>{String(rest.figure)}</Code>
        {rest.settled_by ? ` · ${String(rest.settled_by)}` : ''}
      </Text>
    );
  }
  if (kind === 'status_changed') {
    return (
      <Text size="sm">
        {statusName(String(rest.from))} → {statusName(String(rest.to))}
        {rest.reason ? ` · ${String(rest.reason)}` : ''}
        {rest.note ? ` · ${String(rest.note)}` : ''}
        {rest.by ? ` · ${String(rest.by)}` : ''}
      </Text>
    );
  }
  const shown: Record<string, unknown> = { ...rest };
  if (typeof shown.posting === 'string') shown.posting = line.action({ kind: shown.posting, ref_id: null, memo: null });
  if (typeof shown.method === 'string') shown.method = names.method(shown.method);
  if (typeof shown.bank === 'string') shown.bank = names.bank(shown.bank);
  if (typeof shown.bank_code === 'string') shown.bank_code = names.bank(shown.bank_code);
  if (typeof shown.requisite_value === 'string') shown.requisite_value = names.card(shown.requisite_value);
  if (typeof shown.status === 'string') shown.status = statusName(shown.status);
  if (typeof shown.value === 'string') shown.value = names.card(shown.value);
  const text = Object.entries(shown)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(' · ');
  return (
    <>
      <Text size="sm">{text}</Text>
      {entries?.map((entry) => (
        <Text size="xs" ff="monospace" key={`${entry.account}-${entry.amount}`}>
          {entry.account} {entry.owner_type ?? ''} <Money value={entry.amount} currency="USDT" />
        </Text>
      ))}
    </>
  );
}

/** A row of the payment's card: its name in the person's language, its value (a link, a card number, a moment). */
function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Td c="dimmed">{label}</Table.Td>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

/**
 * Where the payment's open dispute stands (issue 35), read from its timeline: waiting for the
 * executor's answer until its deadline, or with support (contested by the executor, or its
 * deadline passed) until support's.
 */
function DisputeProgress({ items }: { items: TimelineItem[] }) {
  const { t } = useI18n();
  const opened = [...items].reverse().find((i) => i.kind === 'dispute_opened');
  if (!opened) return null;
  const later = items.filter((i) => i.dispute_id === opened.dispute_id);
  const answered = later.find((i) => i.kind === 'dispute_answered');
  const escalated = later.find((i) => i.kind === 'dispute_escalated');
  const withSupport = answered?.answer === 'contested' ? answered : escalated;
  const due = (withSupport?.support_due_at ?? opened.answer_due_at) as string | null | undefined;
  const step = withSupport ? (answered?.answer === 'contested' ? 'payments.disputeContested' : 'payments.disputeEscalated') : 'payments.disputeAwaiting';
  return (
    <Card withBorder aria-label={t('payments.disputeProgress')}>
      <Title order={4}>{t('payments.disputeProgress')}</Title>
      <Text size="sm">{t(step)}</Text>
      {due && (
        <Text size="sm" c="dimmed">
          {t('disputes.deadline')}: <When at={due} />
        </Text>
      )}
    </Card>
  );
}

/** Who a payment is about, by name, each a link in the console: its merchant, its terminal (on the merchant's page), its executor. */
function Parties({ p }: { p: PaymentView }) {
  const { t } = useI18n();
  const merchants = useMerchants();
  const executors = useExecutors();
  const merchantName = merchants.data?.merchants.find((m) => m.id === p.merchant_id)?.name ?? p.merchant_id;
  const executorId = typeof p.executor_id === 'string' ? p.executor_id : null;
  const executorName = executors.data?.executors.find((e) => e.id === executorId)?.name ?? executorId;
  const terminalName = typeof p.terminal_name === 'string' ? p.terminal_name : String(p.terminal_id ?? '');
  return (
    <>
      <Field label={t('payments.field.merchant')}>
        <Anchor component={Link} to={`/merchants/${p.merchant_id}` as never}>
          {merchantName}
        </Anchor>
      </Field>
      {p.terminal_id ? (
        <Field label={t('payments.field.terminal')}>
          <Anchor component={Link} to={`/merchants/${p.merchant_id}` as never} hash={`terminal-${String(p.terminal_id)}`}>
            {terminalName}
          </Anchor>
        </Field>
      ) : null}
      {executorId && (
        <Field label={t('payments.field.executor')}>
          <Anchor component={Link} to={`/executors/${executorId}` as never}>
            {executorName}
          </Anchor>
        </Field>
      )}
    </>
  );
}

const MOMENTS = ['valid_until', 'created_at', 'completed_at'] as const;
const TEXTS = ['client_id', 'cancel_reason', 'cancel_note'] as const;

/** One payment: who and what by name (links to its merchant, terminal and executor in the console), its card, every time in one named zone, and its whole life in order. */
export function PaymentDetail() {
  const { t, f, has } = useI18n();
  const names = useNames();
  const { id } = useParams({ strict: false }) as { id: string };
  const payment = usePayment(id);
  const timeline = usePaymentTimeline(id);
  const cancel = useCancelPayment();
  const [confirming, setConfirming] = useState(false);
  const area = useArea();
  const items = timeline.data?.timeline ?? [];
  const p = payment.data;
  const card = p?.requisites as { value?: string; bank?: string | null; bank_code?: string | null; bank_name?: string; holder?: string } | null | undefined;
  return (
    <Stack>
      <ErrorAlert error={payment.error} />
      {p && (
        <Card withBorder>
          <Group justify="space-between">
            <Title order={3}>
              <Money value={p.amount} currency={p.currency} /> · {names.method(p.method)}
            </Title>
            <Group gap="xs">
              <TestBadge show={p.is_test === true} />
              <StatusBadge status={p.status} />
            </Group>
          </Group>
          <RiskFlagBadges flags={p.risk_flags} />
          <Text size="sm" c="dimmed">
            {p.id}
          </Text>
          <Text size="xs" c="dimmed" data-testid="time-zone">
            {t('common.timesIn', { zone: f.zone() })}
          </Text>
          <Table mt="sm" w="fit-content">
            <Table.Tbody>
              <Field label={t('payments.field.ext_id')}>
                <Code>{p.ext_id}</Code>
              </Field>
              {area === 'console' ? (
                <Parties p={p} />
              ) : (
                typeof p.terminal_name === 'string' && <Field label={t('payments.field.terminal')}>{p.terminal_name}</Field>
              )}
              {card?.value && (
                <Field label={t('payments.field.requisite')}>
                  <Text size="sm" ff="monospace" span>
                    {names.card(card.value)}
                  </Text>
                  {' · '}
                  {names.bank(card.bank_code ?? card.bank) || card.bank_name}
                  {card.holder ? ` · ${card.holder}` : ''}
                </Field>
              )}
              {TEXTS.filter((field) => p[field] !== undefined && p[field] !== null && p[field] !== '').map((field) => (
                <Field key={field} label={t(`payments.field.${field}`)}>
                  {String(p[field])}
                </Field>
              ))}
              {typeof p.payer_class === 'string' && (
                <Field label={t('payments.field.payer_class')}>{t(`risk.class.${p.payer_class as 'new' | 'returning' | 'trusted'}`)}</Field>
              )}
              {MOMENTS.filter((field) => typeof p[field] === 'string').map((field) => (
                <Field key={field} label={t(`payments.field.${field}`)}>
                  <When at={p[field] as string} />
                </Field>
              ))}
            </Table.Tbody>
          </Table>
          {p.status === 'PENDING' && area === 'console' && (
            <Button
              mt="sm"
              color="red"
              variant="light"
              w="fit-content"
              onClick={() => {
                cancel.reset();
                setConfirming(true);
              }}
            >
              {t('payments.cancel')}
            </Button>
          )}
          {area === 'console' && (
            <Group mt="sm">
              <BlockPayer paymentId={p.id} merchantId={p.merchant_id} clientId={p.client_id ?? null} />
            </Group>
          )}
          <ConfirmAction
            opened={confirming}
            title={t('payments.cancelTitle')}
            action={t('payments.cancel')}
            askReason
            busy={cancel.isPending}
            error={cancel.error}
            onClose={() => setConfirming(false)}
            onConfirm={(reason) => cancel.mutate({ id: p.id, reason: reason! }, { onSuccess: () => setConfirming(false) })}
          >
            <Code>{p.ext_id}</Code> · <Money value={p.amount} currency={p.currency} />
            <Text size="xs" c="dimmed">
              {p.id}
            </Text>
            <Text size="sm" mt="xs">
              {t('payments.cancelWhat')}
            </Text>
          </ConfirmAction>
        </Card>
      )}
      {p && area === 'console' && <RiskHitsCard paymentId={p.id} />}
      {p && area === 'merchant' && <MerchantPaymentActions payment={p} />}
      {p?.status === 'DISPUTE' && <DisputeProgress items={items} />}
      <Card withBorder>
        <Title order={4} mb="sm">
          {t('payments.timeline')}
        </Title>
        <ErrorAlert error={timeline.error} />
        <Timeline bulletSize={14} lineWidth={2} active={items.length}>
          {items.map((item, index) => (
            // The history is fixed and ordered by the server: its position is its identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above
            <Timeline.Item key={index} title={timelineTitle(item.kind)}>
              <Text size="xs" c="dimmed">
                <When at={item.at} />
              </Text>
              <Details item={item} />
            </Timeline.Item>
          ))}
        </Timeline>
      </Card>
    </Stack>
  );

  function timelineTitle(kind: string): string {
    const key = `timeline.${kind}`;
    return has(key) ? t(key) : kind.replaceAll('_', ' ');
  }
}
