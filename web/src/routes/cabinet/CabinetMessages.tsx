import { Badge, Button, Card, Group, Select, Stack, Text, Textarea, Title } from '@mantine/core';
import { useState } from 'react';
import { type MyMessage, useLinkMyMessage, useMessagePayments, useMyMessages, useMyRequisites, useSetAsideMyMessage } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { TeachForm } from '../../components/TeachForm';
import { useNames } from '../../components/useNames';
import { When } from '../../components/When';
import { type MessageKey, useI18n } from '../../i18n';
import { cardName } from './cardName';

const COLORS: Record<string, string> = { matched: 'green', ambiguous: 'orange', unreadable: 'red', unmatched: 'yellow' };

/**
 * A message that waits for the executor: linked to one of their own payments of its amount (offered
 * even when the text names no card, or one they do not have), or set aside with the reason — never
 * left with nothing to do.
 */
function WaitingMessage({ message, requisites }: { message: MyMessage; requisites: { id: string; value: string; bank: string | null }[] | undefined }) {
  const { t, f } = useI18n();
  const names = useNames();
  const link = useLinkMyMessage();
  const setAside = useSetAsideMyMessage();
  const payments = useMessagePayments(message.id);
  const fits = payments.data?.payments ?? [];
  const [picked, setPicked] = useState<string | null>(null);
  const choice = picked ?? (fits.length === 1 ? (fits[0]?.id ?? null) : null);
  const [asiding, setAsiding] = useState(false);
  const [reason, setReason] = useState('');
  return (
    <Card withBorder padding="sm" aria-label={`message ${message.id}`}>
      <Group justify="space-between" wrap="nowrap" align="flex-start" gap="xs">
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', minWidth: 0 }}>
          {message.text}
        </Text>
        <Badge variant="light" color={COLORS[message.status] ?? 'gray'} style={{ flexShrink: 0 }}>
          {t(`deviceMessages.${message.status}` as MessageKey)}
        </Badge>
      </Group>
      <Text size="xs" c="dimmed">
        {message.sender ?? ''} · <When at={message.created_at} />
      </Text>
      {message.reason && (
        <Text size="xs" c="orange">
          {message.reason}
        </Text>
      )}
      {!asiding && (
        <Stack mt="xs" gap="xs">
          <Select
            label={t('cabinet.whichPayment')}
            placeholder={fits.length > 0 ? t('cabinet.pickPayment') : undefined}
            data={fits.map((p) => ({
              value: p.id,
              label: `${f.money(p.amount, p.currency)} · ${cardName(requisites, p.requisite_id, names.bank)}${p.payer_confirmed_at ? ` · ${t('cabinet.payerPaid')}` : ''}`,
            }))}
            value={choice}
            onChange={setPicked}
            comboboxProps={{ withinPortal: true }}
          />
          {payments.isSuccess && fits.length === 0 && (
            <Text size="xs" c="dimmed">
              {t('cabinet.noPaymentFits')}
            </Text>
          )}
          <Button fullWidth onClick={() => choice && link.mutate({ id: message.id, paymentId: choice })} disabled={!choice} loading={link.isPending}>
            {t('notifications.link')}
          </Button>
          <Button fullWidth variant="subtle" color="gray" onClick={() => setAsiding(true)}>
            {t('cabinet.setAside')}
          </Button>
        </Stack>
      )}
      {asiding && (
        <Stack mt="xs" gap="xs">
          <Textarea
            label={t('cabinet.setAsideReason')}
            description={t('cabinet.setAsideHint')}
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            autosize
            minRows={2}
            maxLength={1000}
          />
          <Group grow>
            <Button variant="default" onClick={() => setAsiding(false)}>
              {t('common.cancel')}
            </Button>
            <Button
              color="gray"
              disabled={!reason.trim()}
              loading={setAside.isPending}
              onClick={() => setAside.mutate({ id: message.id, note: reason.trim() })}
            >
              {t('cabinet.setAsideConfirm')}
            </Button>
          </Group>
        </Stack>
      )}
      <ErrorAlert error={link.error ?? setAside.error} />
    </Card>
  );
}

/** A message of the executor's nothing could read: the executor may propose its form, which support reviews. */
function RecentMessage({ message }: { message: MyMessage }) {
  const { t } = useI18n();
  const [teaching, setTeaching] = useState(false);
  const teachable = message.amount === null && (message.status === 'unreadable' || message.status === 'resolved');
  return (
    <Card withBorder padding="xs">
      <Group justify="space-between" wrap="nowrap">
        <Text size="xs" lineClamp={2} style={{ minWidth: 0 }}>
          {message.text}
        </Text>
        <Badge variant="light" color={COLORS[message.status] ?? 'gray'} style={{ flexShrink: 0 }}>
          {t(`deviceMessages.${message.status}` as MessageKey)}
        </Badge>
      </Group>
      {teachable && !teaching && (
        <Button mt="xs" size="xs" variant="subtle" onClick={() => setTeaching(true)}>
          {t('teach.proposeButton')}
        </Button>
      )}
      {teaching && <TeachForm area="cabinet" kind="device_message" id={message.id} onDone={() => setTeaching(false)} />}
    </Card>
  );
}

/** Messages the phone sent that wait for the executor: link each to the payment it is for, or set it aside. */
export function CabinetMessages() {
  const { t } = useI18n();
  const waiting = useMyMessages('waiting');
  const recent = useMyMessages();
  const requisites = useMyRequisites();
  return (
    <Stack>
      <Title order={4}>{t('cabinet.toLink')}</Title>
      <ErrorAlert error={waiting.error} />
      {waiting.data?.messages.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      {waiting.data?.messages.map((m) => (
        <WaitingMessage key={m.id} message={m} requisites={requisites.data?.requisites} />
      ))}
      <Title order={4}>{t('cabinet.recent')}</Title>
      {recent.data?.messages.slice(0, 30).map((m) => (
        <RecentMessage key={m.id} message={m} />
      ))}
    </Stack>
  );
}
