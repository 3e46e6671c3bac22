import { Button, Group, SegmentedControl, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useWithdrawalAction, useWithdrawals, type WithdrawalView } from '../../api/withdrawals';
import { CsvLink } from '../../components/CsvLink';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { useI18n } from '../../i18n';

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
  const [filters, setFilters] = useUrlFilters();
  const status = filters.status ?? 'pending';
  const page = pageOf(filters, LIMIT);
  const list = useWithdrawals({ status: status === 'all' ? undefined : status, owner: filters.owner, ...page });
  const rows = list.data?.withdrawals ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Group>
          <Title order={2}>{t('withdrawals.title')}</Title>
          <CsvLink path="/admin/v1/withdrawals" query={{ status: status === 'all' ? undefined : status, owner: filters.owner, offset: page.offset }} />
        </Group>
        <SegmentedControl
          value={status}
          onChange={(value) => setFilters({ status: value })}
          data={['pending', 'processing', 'completed', 'failed', 'all'].map((value) => ({ value, label: value === 'all' ? t('common.all') : value }))}
        />
      </Group>
      <ErrorAlert error={list.error} />
      <Table.ScrollContainer minWidth={800}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('common.amount')}</Table.Th>
              <Table.Th>{t('withdrawals.address')}</Table.Th>
              <Table.Th>{t('common.status')}</Table.Th>
              <Table.Th>{t('common.created')}</Table.Th>
              <Table.Th>{t('common.actions')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((w) => (
              <Table.Tr key={w.id}>
                <Table.Td>
                  <Money value={w.amount} currency="USDT" />
                </Table.Td>
                <Table.Td>
                  <Text size="sm" ff="monospace">
                    {w.address}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {w.merchant_id ? `merchant ${w.merchant_id}` : `executor ${w.executor_id}`}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={w.status} />
                </Table.Td>
                <Table.Td>{new Date(w.created_at).toLocaleString()}</Table.Td>
                <Table.Td>
                  <WithdrawalActions withdrawal={w} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {list.isSuccess && rows.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} total={list.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}
