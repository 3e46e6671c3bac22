import { ActionIcon, AppShell, Badge, Group, Text, UnstyledButton } from '@mantine/core';
import {
  IconBrandTelegram,
  IconCashBanknote,
  IconCreditCard,
  IconDeviceMobile,
  IconGavel,
  IconHome,
  IconLogout,
  IconMessage,
  IconShieldLock,
  IconWallet,
} from '@tabler/icons-react';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { type Me, useLogout } from '../../api/auth';
import { useMyMessages, useMyPayouts, usePending } from '../../api/cabinet';
import { ConfirmIdentity } from '../../components/ConfirmIdentity';
import { type MessageKey, useI18n } from '../../i18n';
import { LanguageSwitch } from '../Shell';

const TABS: { to: string; label: MessageKey; icon: typeof IconHome }[] = [
  { to: '/', label: 'cabinet.home', icon: IconHome },
  { to: '/cards', label: 'cabinet.cards', icon: IconCreditCard },
  { to: '/payouts', label: 'cabinet.payouts', icon: IconCashBanknote },
  { to: '/disputes', label: 'cabinet.disputes', icon: IconGavel },
  { to: '/messages', label: 'cabinet.messages', icon: IconMessage },
  { to: '/deposit', label: 'cabinet.deposit', icon: IconWallet },
  { to: '/phones', label: 'cabinet.phones', icon: IconDeviceMobile },
];

/**
 * What waits for the executor, per tab, refreshed with the lists behind them (every 10 s): payers
 * who pressed "I paid" (check the bank app), payouts taken and not yet paid, messages to link or
 * set aside.
 */
function useWaiting(): Record<string, number> {
  const pending = usePending();
  const payouts = useMyPayouts();
  const messages = useMyMessages('waiting');
  return {
    '/': pending.data?.payments.filter((p) => p.payer_confirmed_at !== null).length ?? 0,
    '/payouts': payouts.data?.taken.length ?? 0,
    '/messages': messages.data?.total ?? 0,
  };
}

/** The executor's cabinet: made for a phone, between two transfers; tabs at the bottom, within the thumb's reach. */
export function CabinetShell({ me }: { me: Me }) {
  const { t } = useI18n();
  const logout = useLogout();
  const waiting = useWaiting();
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
            <ActionIcon
              component={Link}
              to={'/telegram' as never}
              variant={path === '/telegram' ? 'light' : 'subtle'}
              size="lg"
              aria-label={t('telegram.title')}
              aria-current={path === '/telegram' ? 'page' : undefined}
            >
              <IconBrandTelegram size={20} />
            </ActionIcon>
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
            const count = waiting[tab.to] ?? 0;
            return (
              <UnstyledButton
                key={tab.to}
                component={Link}
                to={tab.to as never}
                aria-label={count > 0 ? `${t(tab.label)} (${count})` : t(tab.label)}
                aria-current={active ? 'page' : undefined}
                py={6}
                c={active ? 'blue' : 'dimmed'}
                style={{ display: 'flex', flexDirection: 'column', alignItems: 'center', minWidth: 0, position: 'relative' }}
              >
                <tab.icon size={22} stroke={active ? 2.2 : 1.6} />
                {count > 0 && (
                  <Badge
                    size="xs"
                    color="red"
                    circle={count < 10}
                    aria-hidden
                    style={{ position: 'absolute', top: 2, left: '50%', marginLeft: 6, pointerEvents: 'none' }}
                  >
                    {count > 99 ? '99+' : count}
                  </Badge>
                )}
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
