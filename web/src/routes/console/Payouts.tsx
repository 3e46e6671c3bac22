import { Anchor, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { type PayoutView, payoutProofPath, usePayoutAction, usePayouts } from '../../api/payouts';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { TestBadge } from '../../components/TestBadge';
import { useNames } from '../../components/useNames';
import { useStatusQueue } from '../../components/useStatusQueue';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

const LIMIT = 50;
export const QUEUE_STATUSES = ['pending', 'processing', 'completed', 'failed', 'all'] as const;

function PayoutActions({ payout }: { payout: PayoutView }) {
  const { t } = useI18n();
  const action = usePayoutAction();
  const [reason, setReason] = useState('');
  if (payout.status !== 'pending' && payout.status !== 'processing') return null;
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        <Button size="xs" color="green" onClick={() => action.mutate({ id: payout.id, event: 'complete' })} loading={action.isPending}>
          {t('payouts.complete')}
        </Button>
        <TextInput
          size="xs"
          placeholder={t('payouts.reason')}
          aria-label={t('payouts.reason')}
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          w={140}
        />
        <Button
          size="xs"
          color="red"
          variant="light"
          onClick={() => action.mutate({ id: payout.id, event: 'fail', reason: reason || undefined })}
          loading={action.isPending}
        >
          {t('payouts.fail')}
        </Button>
      </Group>
      <ErrorAlert error={action.error} />
    </Stack>
  );
}

/** A completed payout: who paid it (the executor, a provider, the person who completed it) and its proof. */
function PaidBy({ payout }: { payout: PayoutView }) {
  const { t } = useI18n();
  const paid = payout.paid_by;
  if (payout.status !== 'completed' || !paid) return null;
  const who = [
    paid.executor ? t('payouts.byExecutor', { name: paid.executor }) : null,
    paid.provider ? t('payouts.byProvider', { name: paid.provider }) : null,
    paid.person ? t('payouts.byPerson', { email: paid.person }) : null,
  ].filter(Boolean);
  return (
    <Stack gap={2}>
      <Text size="xs">
        {t('payouts.paidBy')}: {who.join(' · ') || '—'}
      </Text>
      {payout.completed_at && (
        <Text size="xs" c="dimmed">
          {t('payouts.completedAt')}: <When at={payout.completed_at} />
        </Text>
      )}
      {payout.has_proof && (
        <Anchor href={payoutProofPath(payout.id)} target="_blank" rel="noreferrer" size="xs">
          {t('payouts.proof')}
        </Anchor>
      )}
    </Stack>
  );
}

/** Payouts waiting for someone, and the rest by status: finance completes or fails them (completing asks to confirm it is you). */
export function Payouts() {
  const { t } = useI18n();
  const names = useNames();
  const { setFilters, page, status, tabs } = useStatusQueue(QUEUE_STATUSES, 'pending', LIMIT);
  const query = { status };
  const list = usePayouts({ ...query, ...page });
  const rows = list.data?.payouts ?? [];
  return (
    <Stack>
      <ListHeader title={t('payouts.title')} csv={{ path: '/admin/v1/payouts', query: { ...query, offset: page.offset } }} status={tabs} />
      <ErrorAlert error={list.error} />
      <DataTable
        rows={rows}
        loaded={list.isSuccess}
        rowKey={(p) => p.id}
        rowLabel={(p) => `payout ${p.ext_id}`}
        columns={[
          { header: t('common.amount'), cell: (p) => <Money value={p.amount} currency={p.currency} /> },
          {
            header: t('payouts.requisites'),
            cell: (p) => (
              <>
                <Text size="sm">
                  {names.method(p.method)} <span style={{ whiteSpace: 'nowrap' }}>{names.card(p.requisites)}</span>
                </Text>
                <Text size="xs" c="dimmed">
                  {p.holder_name ?? ''} {names.bank(p.bank)} · {p.ext_id}
                </Text>
              </>
            ),
          },
          {
            header: t('common.status'),
            cell: (p) => (
              <Stack gap={4}>
                <Group gap={4} wrap="nowrap">
                  <StatusBadge status={p.status} />
                  <TestBadge show={p.is_test === true} />
                </Group>
                <PaidBy payout={p} />
                {p.failure_reason && (
                  <Text size="xs" c="dimmed">
                    {t('payouts.failure')}: {p.failure_reason}
                  </Text>
                )}
              </Stack>
            ),
          },
          { header: t('common.created'), cell: (p) => <When at={p.created_at} /> },
          { header: t('common.actions'), wide: true, cell: (p) => <PayoutActions payout={p} /> },
        ]}
      />
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} total={list.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}
