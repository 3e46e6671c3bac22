import { Card, Group, Progress, Stack, Switch, Text, Title } from '@mantine/core';
import { type MyRequisite, useMyRequisites, useSwitchMyRequisite } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { useNames } from '../../components/useNames';
import { useI18n } from '../../i18n';
import { cardName } from './cardName';

/** Taken so far against a limit: a bar when there is a limit, the figure alone when there is none. */
function Load({ label, used, limit, currency }: { label: string; used: number; limit: number | null; currency?: string }) {
  const share = limit ? Math.min(100, (used / limit) * 100) : 0;
  return (
    <div>
      <Group justify="space-between" gap={4} wrap="nowrap">
        <Text size="xs" c="dimmed">
          {label}
        </Text>
        <Text size="xs">
          <Money value={used} currency={limit === null ? currency : undefined} />
          {limit !== null && (
            <>
              {' / '}
              <Money value={limit} currency={currency} />
            </>
          )}
        </Text>
      </Group>
      {limit !== null && <Progress value={share} size="sm" color={share >= 90 ? 'red' : share >= 70 ? 'orange' : 'blue'} aria-label={label} />}
    </div>
  );
}

function CardLoad({ requisite }: { requisite: MyRequisite }) {
  const { t } = useI18n();
  const { usage, limits_in_force: limits } = requisite;
  return (
    <Stack gap={4} mt="xs">
      <Load label={t('cabinet.today')} used={usage.day.amount} limit={limits.daily_turnover} currency={requisite.currency} />
      <Load label={t('cabinet.todayCount')} used={usage.day.count} limit={limits.daily_count} />
      {(limits.monthly_turnover !== null || limits.monthly_count !== null) && (
        <>
          <Load label={t('cabinet.month')} used={usage.month.amount} limit={limits.monthly_turnover} currency={requisite.currency} />
          {limits.monthly_count !== null && <Load label={t('cabinet.monthCount')} used={usage.month.count} limit={limits.monthly_count} />}
        </>
      )}
      {(requisite.min_amount > 0 || requisite.max_amount !== null) && (
        <Text size="xs" c="dimmed">
          {t('cabinet.perPayment')}: <Money value={requisite.min_amount} /> – {requisite.max_amount === null ? '∞' : <Money value={requisite.max_amount} />}{' '}
          {requisite.currency}
        </Text>
      )}
    </Stack>
  );
}

/** The executor's cards: each switched on or off with one touch, with what it took today against its limits. */
export function CabinetCards() {
  const { t } = useI18n();
  const names = useNames();
  const requisites = useMyRequisites();
  const toggle = useSwitchMyRequisite();
  return (
    <Stack>
      <Title order={4}>{t('cabinet.cards')}</Title>
      <ErrorAlert error={requisites.error ?? toggle.error} />
      {requisites.data?.requisites.map((r) => (
        <Card withBorder key={r.id} padding="sm">
          <Group justify="space-between" wrap="nowrap">
            <div>
              <Text fw={600}>{cardName([r], r.id, names.bank)}</Text>
              <Text size="xs" c="dimmed">
                {names.card(r.value)} · {names.requisiteType(r.type)} · {r.methods.map(names.method).join(', ')} · {r.currency}
              </Text>
              {r.disabled_reason && (
                <Text size="xs" c="orange">
                  {r.disabled_reason}
                </Text>
              )}
            </div>
            <Switch
              size="lg"
              checked={r.is_active}
              onChange={(e) => toggle.mutate({ id: r.id, is_active: e.currentTarget.checked })}
              aria-label={cardName([r], r.id, names.bank)}
            />
          </Group>
          <CardLoad requisite={r} />
        </Card>
      ))}
    </Stack>
  );
}
