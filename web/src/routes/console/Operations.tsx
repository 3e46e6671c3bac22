import { Alert, Badge, Button, Code, Loader, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useApiBase, useArea } from '../../api/area';
import { useLedgerCheck } from '../../api/ledger';
import { useResendWebhook, useWebhook, useWebhooks } from '../../api/webhooks';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Pager } from '../../components/Pager';
import { StatusBadge, useStatusName } from '../../components/StatusBadge';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

/** One event's payload and its delivery attempts, under its row. */
function WebhookAttempts({ id }: { id: string }) {
  const event = useWebhook(id);
  if (event.error) return <ErrorAlert error={event.error} />;
  if (!event.data) return <Loader size="xs" />;
  return (
    <Stack gap={4}>
      {event.data.attempts.map((a) => (
        <div key={a.attempt}>
          <Text size="xs" c={a.error || (a.status_code ?? 0) >= 300 ? 'red' : undefined}>
            #{a.attempt} · <When at={a.started_at} /> · {a.status_code ?? '—'} · {a.latency_ms ?? '—'} ms {a.error ? `· ${a.error}` : ''}
          </Text>
          {a.response_snippet && (
            <Code block fz="xs" aria-label={`response ${a.attempt}`}>
              {a.response_snippet}
            </Code>
          )}
        </div>
      ))}
      <Text size="xs" c="dimmed">
        POST {event.data.url}
      </Text>
      <Code block fz="xs">
        {JSON.stringify(event.data.payload, null, 2)}
      </Code>
    </Stack>
  );
}

/** The webhook log: every event with its delivery attempts; support re-sends one. */
export function Webhooks() {
  const { t } = useI18n();
  const { statusName } = useStatusName();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, 50);
  // The operator starts from what failed; a merchant from everything that was sent to it.
  const area = useArea();
  const status = filters.status ?? (area === 'merchant' ? 'all' : 'failed');
  const list = useWebhooks({ status: status === 'all' ? undefined : status, resource_id: filters.resource_id, ...page });
  const resend = useResendWebhook();
  const base = useApiBase();
  const rows = list.data?.webhooks ?? [];
  const [opened, setOpened] = useState<string | undefined>();
  return (
    <Stack>
      <ListHeader
        title={t('nav.webhooks')}
        csv={{ path: `${base}/webhooks`, query: { status: status === 'all' ? undefined : status, resource_id: filters.resource_id, offset: page.offset } }}
        status={{
          value: status,
          onChange: (value) => setFilters({ status: value }),
          options: ['pending', 'failed', 'delivered', 'all'].map((value) => ({ value, label: value === 'all' ? t('common.all') : statusName(value) })),
        }}
      />
      <TextInput
        label={t('webhooks.resource')}
        defaultValue={filters.resource_id}
        onChange={(e) => setFilters({ resource_id: e.currentTarget.value.trim() })}
        w={360}
      />
      <ErrorAlert error={list.error ?? resend.error} />
      <Table.ScrollContainer minWidth={900}>
        <Table striped>
          <Table.Tbody>
            {rows.map((w) => (
              <Table.Tr key={w.id}>
                <Table.Td>
                  <Text size="sm">{w.event}</Text>
                  <Text size="xs" c="dimmed">
                    {w.resource_type} {w.resource_id}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="xs">{w.url}</Text>
                  {w.last_error && (
                    <Text size="xs" c="red">
                      {w.last_error}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={w.status} />{' '}
                  <Badge variant="outline" component="button" onClick={() => setOpened(opened === w.id ? undefined : w.id)} style={{ cursor: 'pointer' }}>
                    {w.attempts}
                  </Badge>
                  {opened === w.id && <WebhookAttempts id={w.id} />}
                </Table.Td>
                <Table.Td>
                  <When at={w.created_at} />
                </Table.Td>
                <Table.Td>
                  <Button size="xs" variant="light" onClick={() => resend.mutate(w.id)}>
                    {t('webhooks.resend')}
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Pager offset={page.offset} limit={page.limit} count={rows.length} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}

/** The ledger's invariants, checked on demand. */
export function LedgerCheck() {
  const { t } = useI18n();
  const check = useLedgerCheck();
  return (
    <Stack>
      <Title order={2}>{t('nav.ledger')}</Title>
      <ErrorAlert error={check.error} />
      {check.data?.ok && <Alert color="green">{t('ledger.ok')}</Alert>}
      {check.data?.problems.map((p) => (
        <Alert color="red" key={p.detail} title={p.invariant}>
          {p.detail}
        </Alert>
      ))}
      <Button variant="light" w="fit-content" onClick={() => check.refetch()} loading={check.isFetching}>
        {t('ledger.again')}
      </Button>
    </Stack>
  );
}
