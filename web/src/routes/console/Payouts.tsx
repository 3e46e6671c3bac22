import { Button, Group, SegmentedControl, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { type PayoutView, usePayoutAction, usePayouts } from '../../api/payouts';
import { CsvLink } from '../../components/CsvLink';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { useI18n } from '../../i18n';

const LIMIT = 50;

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

/** Payouts waiting for someone, and the rest by status: finance completes or fails them (completing asks to confirm it is you). */
export function Payouts() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const status = filters.status ?? 'pending';
  const page = pageOf(filters, LIMIT);
  const list = usePayouts({ status: status === 'all' ? undefined : status, ...page });
  const rows = list.data?.payouts ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Group>
          <Title order={2}>{t('payouts.title')}</Title>
          <CsvLink path="/admin/v1/payouts" query={{ status: status === 'all' ? undefined : status, offset: page.offset }} />
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
              <Table.Th>{t('payouts.requisites')}</Table.Th>
              <Table.Th>{t('common.status')}</Table.Th>
              <Table.Th>{t('common.created')}</Table.Th>
              <Table.Th>{t('common.actions')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((p) => (
              <Table.Tr key={p.id} aria-label={`payout ${p.ext_id}`}>
                <Table.Td>
                  <Money value={p.amount} currency={p.currency} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {p.method} {p.requisites}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {p.holder_name ?? ''} {p.bank ?? ''} · {p.ext_id}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={p.status} />
                </Table.Td>
                <Table.Td>{new Date(p.created_at).toLocaleString()}</Table.Td>
                <Table.Td>
                  <PayoutActions payout={p} />
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
