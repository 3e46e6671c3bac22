import {
  ActionIcon,
  Alert,
  AppShell,
  Badge,
  Button,
  Card,
  Code,
  Group,
  Progress,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { useInterval } from '@mantine/hooks';
import { IconCashBanknote, IconCreditCard, IconDeviceMobile, IconHome, IconLogout, IconMessage, IconShieldLock, IconWallet } from '@tabler/icons-react';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { type Me, useLogout } from '../../api/auth';
import {
  type MyMessage,
  type MyRequisite,
  type Pending,
  useLinkMyMessage,
  useMyBalance,
  useMyDevices,
  useMyMessages,
  useMyRequisites,
  useMyStatus,
  usePending,
  useRegisterDevice,
  useRevokeDevice,
  useShift,
  useSwitchMyRequisite,
} from '../../api/cabinet';
import { ConfirmIdentity } from '../../components/ConfirmIdentity';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { When } from '../../components/When';
import { type MessageKey, useI18n } from '../../i18n';
import { LanguageSwitch } from '../Shell';

const TABS: { to: string; label: MessageKey; icon: typeof IconHome }[] = [
  { to: '/', label: 'cabinet.home', icon: IconHome },
  { to: '/cards', label: 'cabinet.cards', icon: IconCreditCard },
  { to: '/payouts', label: 'cabinet.payouts', icon: IconCashBanknote },
  { to: '/messages', label: 'cabinet.messages', icon: IconMessage },
  { to: '/deposit', label: 'cabinet.deposit', icon: IconWallet },
  { to: '/phones', label: 'cabinet.phones', icon: IconDeviceMobile },
];

/** The executor's cabinet: made for a phone, between two transfers; tabs at the bottom, within the thumb's reach. */
export function CabinetShell({ me }: { me: Me }) {
  const { t } = useI18n();
  const logout = useLogout();
  const path = useRouterState({ select: (s) => s.location.pathname.replace(/^\/cabinet/, '') || '/' });
  return (
    <AppShell header={{ height: 52 }} footer={{ height: 60 }} padding="sm">
      <AppShell.Header>
        <Group h="100%" px="sm" justify="space-between" wrap="nowrap">
          <Text fw={600} truncate>
            {me.user.email}
          </Text>
          <Group gap={4} wrap="nowrap">
            <LanguageSwitch />
            <ActionIcon component={Link} to={'/security' as never} variant="subtle" size="lg" aria-label={t('nav.security')}>
              <IconShieldLock size={20} />
            </ActionIcon>
            <ActionIcon variant="subtle" size="lg" onClick={() => logout.mutate()} aria-label={t('nav.signOut')}>
              <IconLogout size={20} />
            </ActionIcon>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Main pb={76}>
        <ConfirmIdentity />
        <Outlet />
      </AppShell.Main>
      <AppShell.Footer>
        <Group h="100%" grow gap={0} component="nav" aria-label="cabinet" wrap="nowrap">
          {TABS.map((tab) => {
            const active = tab.to === '/' ? path === '/' : path.startsWith(tab.to);
            return (
              <UnstyledButton
                key={tab.to}
                component={Link}
                to={tab.to as never}
                aria-label={t(tab.label)}
                aria-current={active ? 'page' : undefined}
                py={6}
                c={active ? 'blue' : 'dimmed'}
                style={{ display: 'flex', flexDirection: 'column', alignItems: 'center', minWidth: 0 }}
              >
                <tab.icon size={22} stroke={active ? 2.2 : 1.6} />
                <Text size="10px" fw={active ? 600 : 400} truncate maw="100%">
                  {t(tab.label)}
                </Text>
              </UnstyledButton>
            );
          })}
        </Group>
      </AppShell.Footer>
    </AppShell>
  );
}

/** Minutes and seconds left until a payment expires, ticking. */
function Countdown({ until }: { until: string }) {
  const [now, setNow] = useState(Date.now());
  const interval = useInterval(() => setNow(Date.now()), 1000);
  useEffect(() => {
    interval.start();
    return interval.stop;
  }, [interval.start, interval.stop]);
  const left = Math.max(0, Math.floor((new Date(until).getTime() - now) / 1000));
  return (
    <Badge color={left < 120 ? 'red' : 'blue'} variant="light">
      {Math.floor(left / 60)}:{String(left % 60).padStart(2, '0')}
    </Badge>
  );
}

function cardName(requisites: { id: string; value: string; bank: string | null }[] | undefined, id: string): string {
  const r = requisites?.find((q) => q.id === id);
  return r ? `${r.bank ?? ''} •• ${r.value.replace(/\D/g, '').slice(-4)}` : id.slice(0, 8);
}

/** Today: the shift, why payments may not come, the deposit, and what is waiting on each card. */
export function CabinetHome() {
  const { t } = useI18n();
  const status = useMyStatus();
  const balance = useMyBalance();
  const shift = useShift();
  const pending = usePending();
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
        <ErrorAlert error={status.error ?? shift.error} />
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
        <Card withBorder key={p.id} padding="sm">
          <Group justify="space-between" wrap="nowrap">
            <div>
              <Text fw={600}>
                <Money value={p.amount} currency={p.currency} />
              </Text>
              <Text size="xs" c="dimmed">
                {cardName(requisites.data?.requisites, p.requisite_id)}
              </Text>
            </div>
            <Countdown until={p.valid_until} />
          </Group>
        </Card>
      ))}
    </Stack>
  );
}

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
              <Text fw={600}>{cardName([r], r.id)}</Text>
              <Text size="xs" c="dimmed">
                {r.type} · {r.methods.join(', ')} · {r.currency}
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
              aria-label={cardName([r], r.id)}
            />
          </Group>
          <CardLoad requisite={r} />
        </Card>
      ))}
    </Stack>
  );
}

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

/** The phones that forward bank messages: when each last reported; register one (its token and secret shown once), revoke one. */
export function CabinetPhones() {
  const { t } = useI18n();
  const devices = useMyDevices();
  const register = useRegisterDevice();
  const revoke = useRevokeDevice();
  const [name, setName] = useState('');
  return (
    <Stack>
      <Title order={4}>{t('cabinet.phones')}</Title>
      {devices.data?.devices.map((d) => (
        <Card withBorder padding="sm" key={d.id}>
          <Group justify="space-between" wrap="nowrap">
            <div>
              <Text fw={600}>{d.name}</Text>
              <Text size="xs" c="dimmed">
                {t('cabinet.lastSeen')}: <When at={d.last_seen_at} />
                {d.battery !== null ? ` · ${d.battery}%` : ''}
              </Text>
            </div>
            <Button size="xs" variant="light" color="red" onClick={() => revoke.mutate(d.id)}>
              {t('security.revoke')}
            </Button>
          </Group>
        </Card>
      ))}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          register.mutate(name.trim(), { onSuccess: () => setName('') });
        }}
      >
        <Group align="flex-end" wrap="nowrap">
          <TextInput label={t('banks.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} style={{ flex: 1 }} />
          <Button type="submit" disabled={!name.trim()} loading={register.isPending}>
            {t('cabinet.addPhone')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={register.error ?? revoke.error ?? devices.error} />
      {register.data && (
        <Alert color="yellow" title={t('cabinet.phoneOnce')}>
          <Text size="xs">token</Text>
          <Code block>{register.data.token}</Code>
          <Text size="xs" mt="xs">
            signing secret
          </Text>
          <Code block>{register.data.signing_secret}</Code>
        </Alert>
      )}
    </Stack>
  );
}
