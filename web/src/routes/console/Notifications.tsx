import { Button, Card, Group, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { type NotificationView, useLinkNotification, useNotifications, useResolveNotification } from '../../api/notifications';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { StatusBadge } from '../../components/StatusBadge';
import { TeachForm } from '../../components/TeachForm';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

const LIMIT = 50;

function NotificationCard({ notification }: { notification: NotificationView }) {
  const { t } = useI18n();
  const link = useLinkNotification();
  const resolve = useResolveNotification();
  const [paymentId, setPaymentId] = useState(notification.candidate_payment_id ?? '');
  const [note, setNote] = useState('');
  const open = notification.status === 'unmatched' || notification.status === 'late';
  const [teaching, setTeaching] = useState(false);
  // The app sent the amount and a text nothing could read: its form can be taught.
  const teachable = !!notification.text && !notification.parsed_bank;
  return (
    <Card withBorder aria-label={`notification ${notification.id}`}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Group>
            <Money value={notification.amount} />
            {notification.parsed_bank && <Text size="sm">{notification.parsed_bank}</Text>}
          </Group>
          <StatusBadge status={notification.status} />
        </Group>
        <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
          {notification.text}
        </Text>
        <Text size="xs" c="dimmed">
          <When at={notification.received_at ?? notification.created_at} /> · {notification.executor_id}
        </Text>
        {notification.payment_id && <Text size="sm">→ {notification.payment_id}</Text>}
        {notification.resolved_note && <Text size="sm">{notification.resolved_note}</Text>}
        {open && (
          <Group align="flex-end">
            <TextInput label={t('notifications.paymentId')} value={paymentId} onChange={(e) => setPaymentId(e.currentTarget.value)} w={340} />
            <Button onClick={() => link.mutate({ id: notification.id, paymentId: paymentId.trim() })} loading={link.isPending} disabled={!paymentId.trim()}>
              {t('notifications.link')}
            </Button>
            <TextInput label={t('notifications.note')} value={note} onChange={(e) => setNote(e.currentTarget.value)} w={260} />
            <Button
              variant="light"
              onClick={() => resolve.mutate({ id: notification.id, note: note.trim() })}
              loading={resolve.isPending}
              disabled={!note.trim()}
            >
              {t('notifications.setAside')}
            </Button>
          </Group>
        )}
        <ErrorAlert error={link.error ?? resolve.error} />
        {teachable && !teaching && (
          <Group>
            <Button variant="outline" size="xs" onClick={() => setTeaching(true)}>
              {t('teach.button')}
            </Button>
          </Group>
        )}
        {teaching && <TeachForm area="console" kind="notification" id={notification.id} onDone={() => setTeaching(false)} />}
      </Stack>
    </Card>
  );
}

/** Unmatched and late bank notifications: link each to its payment, or set it aside with a note. */
export function Notifications() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const status = filters.status ?? 'unmatched';
  const page = pageOf(filters, LIMIT);
  const list = useNotifications({ status, ...page });
  const rows = list.data?.notifications ?? [];
  return (
    <Stack>
      <ListHeader
        title={t('notifications.title')}
        csv={{ path: '/admin/v1/notifications', query: { status, offset: page.offset } }}
        status={{
          value: status,
          onChange: (value) => setFilters({ status: value }),
          options: [
            { value: 'unmatched', label: t('notifications.unmatched') },
            { value: 'late', label: t('notifications.late') },
            { value: 'resolved', label: t('notifications.resolved') },
            { value: 'matched', label: t('notifications.matched') },
          ],
        }}
      />
      <ErrorAlert error={list.error} />
      {list.isSuccess && rows.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      {rows.map((n) => (
        <NotificationCard key={n.id} notification={n} />
      ))}
      <Pager offset={page.offset} limit={LIMIT} count={rows.length} onChange={(offset) => setFilters({ offset: String(offset) })} />
    </Stack>
  );
}
