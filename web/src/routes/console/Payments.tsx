import { Anchor, Button, Card, Code, Group, Select, Stack, Table, Text, TextInput, Timeline, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { useApiBase, useArea } from '../../api/area';
import { useExecutors } from '../../api/executors';
import { useMerchantMe } from '../../api/merchant';
import { useMerchants } from '../../api/merchants';
import { paymentsCsvPath, type TimelineItem, useCancelPayment, usePayment, usePayments, usePaymentTimeline } from '../../api/payments';
import { ConfirmAction } from '../../components/ConfirmAction';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { TestBadge } from '../../components/TestBadge';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';
import { MerchantPaymentActions } from '../merchant/PaymentActions';

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
          data={STATUSES}
          value={filters.status ?? null}
          onChange={(v) => setFilters({ status: v ?? undefined })}
          clearable
          w={170}
        />
        <Select
          label={t('payments.method')}
          data={METHODS}
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
            header: 'ext_id',
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
          { header: t('payments.method'), cell: (p) => p.method },
          { header: t('common.status'), cell: (p) => <StatusBadge status={p.status} /> },
          { header: t('common.created'), cell: (p) => <When at={p.created_at} /> },
        ]}
      />
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} total={list.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}

/** The fields of a history item worth a line, as the API gave them (ledger entries one per line). */
function Details({ item }: { item: TimelineItem }) {
  const { at: _at, kind: _kind, entries, ...rest } = item as TimelineItem & { entries?: { account: string; owner_type: string | null; amount: string }[] };
  const text = Object.entries(rest)
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

const FIELDS = [
  'ext_id',
  'merchant_id',
  'terminal_id',
  'executor_id',
  'requisite_id',
  'client_id',
  'cancel_reason',
  'cancel_note',
  'valid_until',
  'created_at',
  'completed_at',
];

/** One payment: who and what, and its whole life in order (hand-out, signals, notifications, disputes, ledger, webhooks). */
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

export function PaymentDetail() {
  const { t } = useI18n();
  const { id } = useParams({ strict: false }) as { id: string };
  const payment = usePayment(id);
  const timeline = usePaymentTimeline(id);
  const cancel = useCancelPayment();
  const [confirming, setConfirming] = useState(false);
  const area = useArea();
  const items = timeline.data?.timeline ?? [];
  const p = payment.data;
  return (
    <Stack>
      <ErrorAlert error={payment.error} />
      {p && (
        <Card withBorder>
          <Group justify="space-between">
            <Title order={3}>
              <Money value={p.amount} currency={p.currency} /> · {p.method}
            </Title>
            <Group gap="xs">
              <TestBadge show={p.is_test === true} />
              <StatusBadge status={p.status} />
            </Group>
          </Group>
          <Text size="sm" c="dimmed">
            {p.id}
          </Text>
          <Table mt="sm" w="fit-content">
            <Table.Tbody>
              {FIELDS.filter((field) => p[field] !== undefined && p[field] !== null).map((field) => (
                <Table.Tr key={field}>
                  <Table.Td c="dimmed">{field}</Table.Td>
                  <Table.Td>
                    <Code>{String(p[field])}</Code>
                  </Table.Td>
                </Table.Tr>
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
            <Timeline.Item key={index} title={item.kind.replaceAll('_', ' ')}>
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
}
