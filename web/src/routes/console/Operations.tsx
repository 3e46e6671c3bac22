import { Alert, Badge, Button, Code, Loader, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useApiBase, useArea } from '../../api/area';
import { useLedgerCheck } from '../../api/ledger';
import { useResendWebhook, useWebhook, useWebhooks } from '../../api/webhooks';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
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

/** The log's tabs: what needs attention first (failing or failed), then each status. */
const WEBHOOK_TABS = ['attention', 'failing', 'failed', 'pending', 'delivered', 'all'] as const;

/**
 * The webhook log: every event with its delivery attempts; support re-sends one. A delivery whose
 * attempt failed is shown as failing from that first failure (it stays `pending` in the API while
 * it is retried, for 24 h), with its last error and when it is tried next.
 */
export function Webhooks() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, 50);
  // The operator starts from what needs attention — failing (still retried) or failed; a merchant
  // from everything that was sent to it.
  const area = useArea();
  const status = filters.status ?? (area === 'merchant' ? 'all' : 'attention');
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
          options: WEBHOOK_TABS.map((value) => ({ value, label: t(`webhooks.tab.${value}`) })),
        }}
      >
        <TextInput
          label={t('webhooks.resource')}
          defaultValue={filters.resource_id}
          onChange={(e) => setFilters({ resource_id: e.currentTarget.value.trim() })}
          w={360}
        />
      </ListHeader>
      <ErrorAlert error={list.error ?? resend.error} />
      <DataTable
        rows={rows}
        loaded={list.isSuccess}
        rowKey={(w) => w.id}
        rowLabel={(w) => `webhook ${w.event} ${w.resource_id}`}
        minWidth={900}
        striped
        columns={[
          {
            header: t('webhooks.event'),
            cell: (w) => (
              <>
                <Text size="sm">{w.event}</Text>
                <Text size="xs" c="dimmed">
                  {w.resource_type} {w.resource_id}
                </Text>
              </>
            ),
          },
          {
            header: t('webhooks.url'),
            wide: true,
            cell: (w) => (
              <>
                <Text size="xs">{w.url}</Text>
                {w.last_error && (
                  <Text size="xs" c="red">
                    {t('webhooks.lastError')}: {w.last_error}
                  </Text>
                )}
                {w.failing && (
                  <Text size="xs" c="dimmed">
                    {t('webhooks.nextRetry')}: <When at={w.next_attempt_at} />
                  </Text>
                )}
              </>
            ),
          },
          {
            header: t('common.status'),
            cell: (w) => (
              <>
                {w.failing ? (
                  <Badge color="orange" variant="light">
                    {t('webhooks.failing')}
                  </Badge>
                ) : (
                  <StatusBadge status={w.status} />
                )}{' '}
                <Badge variant="outline" component="button" onClick={() => setOpened(opened === w.id ? undefined : w.id)} style={{ cursor: 'pointer' }}>
                  {w.attempts}
                </Badge>
                {opened === w.id && <WebhookAttempts id={w.id} />}
              </>
            ),
          },
          { header: t('common.created'), cell: (w) => <When at={w.created_at} /> },
          {
            header: '',
            cell: (w) => (
              <Button size="xs" variant="light" onClick={() => resend.mutate(w.id)}>
                {t('webhooks.resend')}
              </Button>
            ),
          },
        ]}
      />
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
