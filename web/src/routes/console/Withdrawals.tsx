import { Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { useWithdrawalAction, useWithdrawals, type WithdrawalView } from '../../api/withdrawals';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { useStatusQueue } from '../../components/useStatusQueue';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';
import { QUEUE_STATUSES } from './Payouts';

const LIMIT = 50;

function WithdrawalActions({ withdrawal }: { withdrawal: WithdrawalView }) {
  const { t } = useI18n();
  const action = useWithdrawalAction();
  const [hash, setHash] = useState('');
  if (withdrawal.status !== 'pending' && withdrawal.status !== 'processing') return null;
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        <TextInput
          size="xs"
          placeholder={t('withdrawals.txHash')}
          aria-label={t('withdrawals.txHash')}
          value={hash}
          onChange={(e) => setHash(e.currentTarget.value)}
          w={200}
        />
        <Button
          size="xs"
          color="green"
          disabled={!hash.trim()}
          onClick={() => action.mutate({ id: withdrawal.id, event: 'complete', tx_hash: hash.trim() })}
          loading={action.isPending}
        >
          {t('payouts.complete')}
        </Button>
        <Button size="xs" color="red" variant="light" onClick={() => action.mutate({ id: withdrawal.id, event: 'fail' })} loading={action.isPending}>
          {t('payouts.fail')}
        </Button>
      </Group>
      <ErrorAlert error={action.error} />
    </Stack>
  );
}

/** USDT withdrawals of merchants and executors: finance completes a manual one with its transaction hash, or fails it. */
export function Withdrawals() {
  const { t } = useI18n();
  const { filters, setFilters, page, status, tabs } = useStatusQueue(QUEUE_STATUSES, 'pending', LIMIT);
  const query = { status, owner: filters.owner };
  const list = useWithdrawals({ ...query, ...page });
  const rows = list.data?.withdrawals ?? [];
  return (
    <Stack>
      <ListHeader title={t('withdrawals.title')} csv={{ path: '/admin/v1/withdrawals', query: { ...query, offset: page.offset } }} status={tabs} />
      <ErrorAlert error={list.error} />
      <DataTable
        rows={rows}
        loaded={list.isSuccess}
        rowKey={(w) => w.id}
        rowLabel={(w) => `withdrawal ${w.address}`}
        columns={[
          { header: t('common.amount'), cell: (w) => <Money value={w.amount} currency="USDT" /> },
          {
            header: t('withdrawals.address'),
            cell: (w) => (
              <>
                <Text size="sm" ff="monospace">
                  {w.address}
                </Text>
                <Text size="xs" c="dimmed">
                  {w.merchant_id ? `merchant ${w.merchant_id}` : `executor ${w.executor_id}`}
                </Text>
              </>
            ),
          },
          { header: t('common.status'), cell: (w) => <StatusBadge status={w.status} /> },
          { header: t('common.created'), cell: (w) => <When at={w.created_at} /> },
          { header: t('common.actions'), wide: true, cell: (w) => <WithdrawalActions withdrawal={w} /> },
        ]}
      />
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} total={list.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}
