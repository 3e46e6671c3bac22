import { AppShell, Burger, Group, NavLink, ScrollArea, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { useDisclosure, useReducedMotion } from '@mantine/hooks';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { type Me, useLogout } from '../api/auth';
import { ConfirmIdentity } from '../components/ConfirmIdentity';
import { useNames } from '../components/useNames';
import { type MessageKey, useI18n } from '../i18n';
import { Security } from './console/Security';

export function LanguageSwitch() {
  const { lang, setLang } = useI18n();
  return (
    <SegmentedControl
      size="xs"
      value={lang}
      onChange={(value) => setLang(value as 'en' | 'ru')}
      data={[
        { value: 'ru', label: 'Русский' },
        { value: 'en', label: 'English' },
      ]}
    />
  );
}

/** Screens by kind of work, and the role that can use them (the API refuses the rest anyway: this only hides what would be refused). */
export type Nav = { section: MessageKey; items: { to: string; label: MessageKey; roles?: string[] }[] }[];

const NAV: Nav = [
  {
    section: 'nav.daily',
    items: [
      { to: '/', label: 'nav.dashboard' },
      { to: '/payments', label: 'nav.payments' },
      { to: '/disputes', label: 'nav.disputes' },
      { to: '/notifications', label: 'nav.notifications' },
      { to: '/device-messages', label: 'nav.deviceMessages' },
      { to: '/payouts', label: 'nav.payouts' },
      { to: '/withdrawals', label: 'nav.withdrawals' },
      { to: '/risk', label: 'nav.risk' },
    ],
  },
  {
    section: 'nav.directory',
    items: [
      { to: '/executors', label: 'nav.executors' },
      { to: '/merchants', label: 'nav.merchants' },
      { to: '/rates', label: 'nav.rates' },
      { to: '/banks', label: 'nav.banks' },
      { to: '/providers', label: 'nav.providers' },
      { to: '/webhooks', label: 'nav.webhooks' },
      { to: '/ledger', label: 'nav.ledger' },
    ],
  },
  {
    section: 'nav.people',
    items: [
      { to: '/users', label: 'nav.users', roles: ['admin'] },
      { to: '/audit', label: 'nav.audit', roles: ['admin'] },
      { to: '/security', label: 'nav.security' },
    ],
  },
];

/** The people's app frame: a menu of screens (the console's, or another area's `nav` under its `base` path) beside the screen. */
export function Shell({ me, forceSecurity = false, nav = NAV, base = '/console' }: { me: Me; forceSecurity?: boolean; nav?: Nav; base?: string }) {
  const { t } = useI18n();
  const names = useNames();
  const [opened, { toggle, close }] = useDisclosure();
  // The menu slides on a phone, unless the person asked for less motion.
  const reduceMotion = useReducedMotion();
  const logout = useLogout();
  const path = useRouterState({ select: (s) => s.location.pathname.slice(s.location.pathname.startsWith(base) ? base.length : 0) || '/' });
  return (
    <AppShell
      transitionDuration={reduceMotion ? 0 : 200}
      header={{ height: 52 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group>
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="menu" />
            <Title order={4}>Kassir</Title>
          </Group>
          <Group gap="sm">
            <Text size="sm" c="dimmed" visibleFrom="sm">
              {me.user.email} · {names.role(me.user.role)}
            </Text>
            <Group visibleFrom="sm">
              <LanguageSwitch />
            </Group>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="navigation">
        <AppShell.Section grow component={ScrollArea}>
          <Stack gap={2}>
            {nav.map(({ section, items }) => {
              const shown = items.filter((item) => (!item.roles || item.roles.includes(me.user.role)) && (!forceSecurity || item.to === '/security'));
              if (shown.length === 0) return null;
              return (
                <Stack gap={0} key={section} mb="xs">
                  <Text size="xs" c="dimmed" tt="uppercase" px="sm" py={4}>
                    {t(section)}
                  </Text>
                  {shown.map((item) => (
                    <NavLink
                      key={item.to}
                      component={Link}
                      to={item.to}
                      label={t(item.label)}
                      active={item.to === '/' ? path === '/' : path.startsWith(item.to)}
                      onClick={close}
                    />
                  ))}
                </Stack>
              );
            })}
            <NavLink component="button" label={t('nav.signOut')} onClick={() => logout.mutate()} />
            <Group hiddenFrom="sm" p="xs">
              <LanguageSwitch />
            </Group>
          </Stack>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>{forceSecurity ? <Security /> : <Outlet />}</AppShell.Main>
      <ConfirmIdentity />
    </AppShell>
  );
}
