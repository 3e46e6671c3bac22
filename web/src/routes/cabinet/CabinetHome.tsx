import { Alert, Badge, Card, Group, Stack, Switch, Text, Title } from '@mantine/core';
import { useMyBalance, useMyRequisites, useMyStatus, usePending, useReceivedToday, useShift } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { useNames } from '../../components/useNames';
import { useSecondsLeft } from '../../components/useSecondsLeft';
import { When } from '../../components/When';
import { type MessageKey, useI18n } from '../../i18n';
import { TelegramNudge } from './CabinetTelegram';
import { cardName } from './cardName';

/** Minutes and seconds left until a payment expires, ticking. */
function Countdown({ until }: { until: string }) {
  const left = useSecondsLeft(until);
  return (
    <Badge color={left < 120 ? 'red' : 'blue'} variant="light">
      {Math.floor(left / 60)}:{String(left % 60).padStart(2, '0')}
    </Badge>
  );
}

/** Today: the shift, why payments may not come, the money received today, the deposit, and what is waiting on each card. */
export function CabinetHome() {
  const { t } = useI18n();
  const names = useNames();
  const status = useMyStatus();
  const balance = useMyBalance();
  const shift = useShift();
  const pending = usePending();
  const received = useReceivedToday();
  const requisites = useMyRequisites();
  const s = status.data;
  return (
    <Stack>
      <Card withBorder>
        <Group justify="space-between">
          <Title order={4}>{t('cabinet.shift')}</Title>
          {s && <Switch size="lg" checked={!s.is_paused} onChange={(e) => shift.mutate(e.currentTarget.checked)} aria-label={t('cabinet.shift')} />}
        </Group>
        {s && (
          <Text size="sm" c={s.takes_payments ? 'green' : 'orange'}>
            {s.takes_payments ? t('cabinet.taking') : t('cabinet.notTaking')}
          </Text>
        )}
        {s?.devices_silent && (
          <Alert color="orange" mt="xs">
            {t('cabinet.silent')}
          </Alert>
        )}
        {s?.why_not
          ?.filter((why) => why.startsWith('dispute_'))
          .map((why) => (
            <Alert key={why} color="orange" mt="xs">
              {t(`cabinet.why.${why}` as MessageKey)}
            </Alert>
          ))}
        <ErrorAlert error={status.error ?? shift.error} />
      </Card>
      <Card withBorder aria-label={t('cabinet.receivedToday')}>
        <Text size="sm" c="dimmed">
          {t('cabinet.receivedToday')}
        </Text>
        {received.data?.received.length === 0 && (
          <Title order={3}>
            <Money value="0" />
          </Title>
        )}
        {received.data?.received.map((r) => (
          <Group key={r.currency} justify="space-between" wrap="nowrap">
            <Title order={3}>
              <Money value={r.amount} currency={r.currency} />
            </Title>
            <Text size="sm" c="dimmed">
              {t('cabinet.receivedCount', { count: r.count })}
            </Text>
          </Group>
        ))}
        <ErrorAlert error={received.error} />
      </Card>
      <Card withBorder>
        <Text size="sm" c="dimmed">
          {t('executors.available')}
        </Text>
        <Title order={3}>
          <Money value={balance.data?.balance} currency="USDT" />
        </Title>
        <Text size="sm" c="dimmed">
          {t('executors.frozen')}: <Money value={balance.data?.balance_frozen} currency="USDT" />
        </Text>
      </Card>
      <Title order={4}>{t('cabinet.waiting')}</Title>
      {pending.data?.payments.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      {pending.data?.payments.map((p) => (
        <Card
          withBorder
          key={p.id}
          padding="sm"
          aria-label={`payment ${p.id}`}
          style={p.payer_confirmed_at ? { borderColor: 'var(--mantine-color-green-6)' } : undefined}
        >
          <Group justify="space-between" wrap="nowrap">
            <div style={{ minWidth: 0 }}>
              <Text fw={600}>
                <Money value={p.amount} currency={p.currency} />
              </Text>
              <Text size="xs" c="dimmed">
                {cardName(requisites.data?.requisites, p.requisite_id, names.bank)}
              </Text>
            </div>
            <Countdown until={p.valid_until} />
          </Group>
          {p.payer_confirmed_at && (
            <Text size="sm" c="green.8" fw={600} mt={4}>
              {t('cabinet.payerPaidCheck')} · <When at={p.payer_confirmed_at} />
            </Text>
          )}
        </Card>
      ))}
      <TelegramNudge />
    </Stack>
  );
}
