import { Badge, Button, Card, Group, Select, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { type MyMessage, type Pending, useLinkMyMessage, useMyMessages, useMyRequisites, usePending } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';
import { cardName } from './cardName';

function WaitingMessage({
  message,
  pending,
  requisites,
}: {
  message: MyMessage;
  pending: Pending[];
  requisites: { id: string; value: string; bank: string | null }[] | undefined;
}) {
  const { t } = useI18n();
  const link = useLinkMyMessage();
  const fits = pending.filter((p) => message.amount === null || Number(p.amount) === Number(message.amount));
  const [choice, setChoice] = useState<string | null>(fits.length === 1 ? (fits[0]?.id ?? null) : null);
  return (
    <Card withBorder padding="sm" aria-label={`message ${message.id}`}>
      <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
        {message.text}
      </Text>
      <Text size="xs" c="dimmed">
        {message.sender ?? ''} · <When at={message.created_at} />
      </Text>
      {message.reason && (
        <Text size="xs" c="orange">
          {message.reason}
        </Text>
      )}
      <Stack mt="xs" gap="xs">
        <Select
          label={t('cabinet.whichPayment')}
          data={fits.map((p) => ({ value: p.id, label: `${p.amount} ${p.currency} · ${cardName(requisites, p.requisite_id)}` }))}
          value={choice}
          onChange={setChoice}
        />
        <Button fullWidth onClick={() => choice && link.mutate({ id: message.id, paymentId: choice })} disabled={!choice} loading={link.isPending}>
          {t('notifications.link')}
        </Button>
      </Stack>
      <ErrorAlert error={link.error} />
    </Card>
  );
}

/** Messages the phone sent that wait for the executor: link each to the payment it is for. */
export function CabinetMessages() {
  const { t } = useI18n();
  const waiting = useMyMessages('ambiguous');
  const recent = useMyMessages();
  const pending = usePending();
  const requisites = useMyRequisites();
  return (
    <Stack>
      <Title order={4}>{t('cabinet.toLink')}</Title>
      {waiting.data?.messages.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      {waiting.data?.messages.map((m) => (
        <WaitingMessage key={m.id} message={m} pending={pending.data?.payments ?? []} requisites={requisites.data?.requisites} />
      ))}
      <Title order={4}>{t('cabinet.recent')}</Title>
      {recent.data?.messages.slice(0, 30).map((m) => (
        <Card withBorder padding="xs" key={m.id}>
          <Group justify="space-between" wrap="nowrap">
            <Text size="xs" lineClamp={2}>
              {m.text}
            </Text>
            <Badge variant="light" color={m.status === 'matched' ? 'green' : m.status === 'ambiguous' ? 'orange' : 'gray'}>
              {m.status}
            </Badge>
          </Group>
        </Card>
      ))}
    </Stack>
  );
}
