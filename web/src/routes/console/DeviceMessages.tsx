import { Anchor, Badge, Button, Card, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { ApiError } from '../../api/client';
import { type DeviceMessageView, type PaymentRef, useDeviceMessages, useLinkDeviceMessage, useSetAsideDeviceMessage } from '../../api/devices';
import { useExecutors } from '../../api/executors';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Pager } from '../../components/Pager';
import { TeachForm } from '../../components/TeachForm';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

const LIMIT = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the operator typed: a payment's id, or else the merchant's order id (with the merchant picked when several use it). */
function paymentRef(typed: string, merchantId: string | null): PaymentRef {
  const value = typed.trim();
  if (UUID.test(value)) return { payment_id: value };
  return merchantId ? { ext_id: value, merchant_id: merchantId } : { ext_id: value };
}

/** The merchants an ambiguous ext_id names, from the error's data (payments of several merchants). */
function ambiguousMerchants(error: unknown): { value: string; label: string }[] {
  if (!(error instanceof ApiError) || error.data?.ambiguous !== true || !Array.isArray(error.data.payments)) return [];
  const seen = new Map<string, string>();
  for (const p of error.data.payments as { merchant_id: string; merchant_name: string }[]) seen.set(p.merchant_id, p.merchant_name);
  return [...seen].map(([value, label]) => ({ value, label }));
}

const COLORS: Record<string, string> = {
  ambiguous: 'orange',
  unreadable: 'red',
  unmatched: 'yellow',
  matched: 'green',
  resolved: 'gray',
  ignored: 'gray',
};

function MessageCard({
  message,
  executorName,
  onLinkedUnread,
}: {
  message: DeviceMessageView;
  executorName: string | undefined;
  /** The message was read by nothing and a person just linked it: the screen offers to teach its form. */
  onLinkedUnread: (message: DeviceMessageView) => void;
}) {
  const { t } = useI18n();
  const link = useLinkDeviceMessage();
  const setAside = useSetAsideDeviceMessage();
  const [paymentId, setPaymentId] = useState(message.payment_id ?? '');
  const [merchantId, setMerchantId] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const [teaching, setTeaching] = useState(false);
  // A message nothing could read (waiting, or linked by a person since): its form can be taught.
  const teachable = message.amount === null && (message.status === 'unreadable' || message.status === 'resolved');
  // Every message that waits for a person is linked or set aside here (an unmatched one with its notification).
  const linkable = message.status === 'ambiguous' || message.status === 'unreadable' || message.status === 'unmatched';
  const merchants = ambiguousMerchants(link.error);
  return (
    <Card withBorder aria-label={`message ${message.id}`}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Group gap="xs">
            {message.amount !== null && (
              <Text fw={600}>
                {message.amount} {message.currency ?? ''}
              </Text>
            )}
            {message.sender && (
              <Text size="sm" c="dimmed">
                {t('deviceMessages.sender')}: {message.sender}
              </Text>
            )}
          </Group>
          <Badge color={COLORS[message.status] ?? 'gray'} variant="light">
            {t(`deviceMessages.${message.status}`)}
          </Badge>
        </Group>
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {message.text}
        </Text>
        <Text size="xs" c="dimmed">
          <When at={message.received_at ?? message.created_at} /> ·{' '}
          <Anchor component={Link} to={`/executors/${message.executor_id}` as never} size="xs">
            {executorName ?? message.executor_id}
          </Anchor>
        </Text>
        {message.reason && (
          <Text size="sm" c="orange">
            {t('deviceMessages.reason')}: {message.reason}
          </Text>
        )}
        {message.payment_id && message.status !== 'unmatched' && (
          <Text size="sm">
            →{' '}
            <Anchor component={Link} to={`/payments/${message.payment_id}` as never}>
              {message.payment_id}
            </Anchor>
          </Text>
        )}
        {message.resolved_note && <Text size="sm">{message.resolved_note}</Text>}
        {linkable && (
          <Group align="flex-end">
            <TextInput
              label={t('deviceMessages.paymentRef')}
              value={paymentId}
              onChange={(e) => {
                setPaymentId(e.currentTarget.value);
                setMerchantId(null);
              }}
              w={{ base: '100%', sm: 340 }}
            />
            {merchants.length > 0 && !UUID.test(paymentId.trim()) && (
              <Select label={t('deviceMessages.whichMerchant')} data={merchants} value={merchantId} onChange={setMerchantId} w={{ base: '100%', sm: 340 }} />
            )}
            <Button
              onClick={() =>
                link.mutate(
                  { id: message.id, ref: paymentRef(paymentId, merchantId) },
                  { onSuccess: () => (message.amount === null ? onLinkedUnread(message) : undefined) },
                )
              }
              loading={link.isPending}
              disabled={!paymentId.trim()}
            >
              {t('notifications.link')}
            </Button>
            <TextInput label={t('notifications.note')} value={note} onChange={(e) => setNote(e.currentTarget.value)} w={{ base: '100%', sm: 260 }} />
            <Button variant="light" onClick={() => setAside.mutate({ id: message.id, note: note.trim() })} loading={setAside.isPending} disabled={!note.trim()}>
              {t('notifications.setAside')}
            </Button>
          </Group>
        )}
        <ErrorAlert error={link.error ?? setAside.error} />
        {teachable && !teaching && (
          <Group>
            <Button variant="outline" size="xs" onClick={() => setTeaching(true)}>
              {t('teach.button')}
            </Button>
          </Group>
        )}
        {teaching && <TeachForm area="console" kind="device_message" id={message.id} onDone={() => setTeaching(false)} />}
      </Stack>
    </Card>
  );
}

/** The bank messages executors' phones forwarded: those no one could match wait here to be linked to a payment or set aside. */
export function DeviceMessages() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const status = filters.status ?? 'waiting';
  const page = pageOf(filters, LIMIT);
  const query = { status: status === 'all' ? undefined : status, executor_id: filters.executor_id };
  const list = useDeviceMessages({ ...query, ...page });
  const executors = useExecutors();
  const names = new Map((executors.data?.executors ?? []).map((e) => [e.id, e.name]));
  const rows = list.data?.messages ?? [];
  const [linkedUnread, setLinkedUnread] = useState<DeviceMessageView | null>(null);
  return (
    <Stack>
      <ListHeader
        title={t('deviceMessages.title')}
        csv={{ path: '/admin/v1/device-messages', query: { ...query, offset: page.offset } }}
        status={{
          value: status,
          onChange: (value) => setFilters({ status: value }),
          options: [
            { value: 'waiting', label: t('deviceMessages.waiting') },
            { value: 'ambiguous', label: t('deviceMessages.ambiguous') },
            { value: 'unreadable', label: t('deviceMessages.unreadable') },
            { value: 'unmatched', label: t('deviceMessages.unmatched') },
            { value: 'resolved', label: t('deviceMessages.resolved') },
            { value: 'matched', label: t('deviceMessages.matched') },
            { value: 'ignored', label: t('deviceMessages.ignored') },
            { value: 'all', label: t('common.all') },
          ],
        }}
      >
        <Select
          label={t('executors.name')}
          placeholder={t('common.all')}
          data={(executors.data?.executors ?? []).map((e) => ({ value: e.id, label: e.name }))}
          value={filters.executor_id ?? null}
          onChange={(value) => setFilters({ executor_id: value ?? undefined })}
          searchable
          clearable
          w={{ base: '100%', sm: 300 }}
        />
      </ListHeader>
      <ErrorAlert error={list.error} />
      {linkedUnread && (
        <Card withBorder aria-label={t('teach.button')}>
          <Stack gap="xs">
            <Text fw={600}>{t('teach.linkedTitle')}</Text>
            <TeachForm area="console" kind="device_message" id={linkedUnread.id} onDone={() => setLinkedUnread(null)} />
          </Stack>
        </Card>
      )}
      {list.isSuccess && rows.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      {rows.map((m) => (
        <MessageCard key={m.id} message={m} executorName={names.get(m.executor_id)} onLinkedUnread={setLinkedUnread} />
      ))}
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} total={list.data?.total} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}
