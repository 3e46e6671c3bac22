import '@mantine/core/styles.css';
import '@mantine/charts/styles.css';
import './components/phone.css';
import { Button, Center, Loader, MantineProvider, Stack, Text } from '@mantine/core';
import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { createRootRoute, createRoute, createRouter, lazyRouteComponent, Outlet, type RouteComponent, RouterProvider } from '@tanstack/react-router';
import { setNonce } from 'get-nonce';
import { lazy, type ReactNode, StrictMode, Suspense, useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { AreaProvider } from './api/area';
import { type Me, meKey, useLogout, useMe } from './api/auth';
import { setSignedOutHandler } from './api/client';
import { SignInAgain } from './components/SignInAgain';
import { I18nProvider, type MessageKey, useI18n } from './i18n';
import { Security } from './routes/console/Security';
import { ChooseOwnPassword, Login } from './routes/Login';
import { type Nav, Shell } from './routes/Shell';

// Every screen is its own chunk, fetched when its route is first opened (a chunk that vanished
// with a new release reloads the page: lazyRouteComponent); the first screen — the sign-in form, the
// shell — is all the entry script carries. Modules with two screens are imported once for both.
const screens = {
  dashboard: () => import('./routes/console/Dashboard'),
  payments: () => import('./routes/console/Payments'),
  disputes: () => import('./routes/console/Disputes'),
  notifications: () => import('./routes/console/Notifications'),
  deviceMessages: () => import('./routes/console/DeviceMessages'),
  payouts: () => import('./routes/console/Payouts'),
  withdrawals: () => import('./routes/console/Withdrawals'),
  executors: () => import('./routes/console/Executors'),
  merchants: () => import('./routes/console/Merchants'),
  rates: () => import('./routes/console/Rates'),
  directory: () => import('./routes/console/Directory'),
  operations: () => import('./routes/console/Operations'),
  users: () => import('./routes/console/Users'),
  audit: () => import('./routes/console/Audit'),
  risk: () => import('./routes/console/Risk'),
};
const cabinetScreens = {
  home: () => import('./routes/cabinet/CabinetHome'),
  cards: () => import('./routes/cabinet/CabinetCards'),
  payouts: () => import('./routes/cabinet/CabinetPayouts'),
  disputes: () => import('./routes/cabinet/CabinetDisputes'),
  messages: () => import('./routes/cabinet/CabinetMessages'),
  deposit: () => import('./routes/cabinet/CabinetDeposit'),
  phones: () => import('./routes/cabinet/CabinetPhones'),
  telegram: () => import('./routes/cabinet/CabinetTelegram'),
};
const merchantScreens = {
  merchant: () => import('./routes/merchant/Merchant'),
  test: () => import('./routes/merchant/TestConsole'),
};

/** Who is signed in, or the area's screens, still on their way. */
function Waiting() {
  return (
    <Center mih="100vh">
      <Loader />
    </Center>
  );
}

/** An executor's or a merchant's sign-in reached the operator console: say so, and let them sign out. */
function NotStaff({ role }: { role: string }) {
  const { t } = useI18n();
  const logout = useLogout();
  return (
    <Center mih="100vh" p="md">
      <Stack align="center">
        <Text>{t('login.cabinet')}</Text>
        {role === 'executor' && (
          <Button component="a" href="/cabinet">
            {t('cabinet.open')}
          </Button>
        )}
        {role === 'merchant' && (
          <Button component="a" href="/merchant">
            {t('merchant.open')}
          </Button>
        )}
        <Button variant="light" onClick={() => logout.mutate()}>
          {t('nav.signOut')}
        </Button>
      </Stack>
    </Center>
  );
}

/**
 * Signed in: the console; not: the sign-in form; a password generated for them: choosing their own,
 * before anything else; a role that must enrol two-factor first: the security screen.
 */
function Root() {
  const me = useMe();
  const client = useQueryClient();
  useEffect(() => {
    setSignedOutHandler(() => client.setQueryData(meKey, null));
    return () => setSignedOutHandler(null);
  }, [client]);
  if (me.isPending) {
    return <Waiting />;
  }
  if (!me.data) return <Login />;
  if (me.data.must_change_password) return <ChooseOwnPassword />;
  if (me.data.user.role === 'executor' || me.data.user.role === 'merchant') return <NotStaff role={me.data.user.role} />;
  if (me.data.two_factor_required && !me.data.two_factor) return <Shell me={me.data} forceSecurity />;
  return <Shell me={me.data} />;
}

const rootRoute = createRootRoute({ component: () => <Outlet /> });
const appRoute = createRoute({ getParentRoute: () => rootRoute, id: 'app', component: Root });
const page = (path: string, component: RouteComponent) => createRoute({ getParentRoute: () => appRoute, path, component });

const routeTree = rootRoute.addChildren([
  appRoute.addChildren([
    page('/', lazyRouteComponent(screens.dashboard, 'Dashboard')),
    page('/payments', lazyRouteComponent(screens.payments, 'Payments')),
    page('/payments/$id', lazyRouteComponent(screens.payments, 'PaymentDetail')),
    page('/disputes', lazyRouteComponent(screens.disputes, 'Disputes')),
    page('/notifications', lazyRouteComponent(screens.notifications, 'Notifications')),
    page('/device-messages', lazyRouteComponent(screens.deviceMessages, 'DeviceMessages')),
    page('/payouts', lazyRouteComponent(screens.payouts, 'Payouts')),
    page('/withdrawals', lazyRouteComponent(screens.withdrawals, 'Withdrawals')),
    page('/executors', lazyRouteComponent(screens.executors, 'Executors')),
    page('/executors/$id', lazyRouteComponent(screens.executors, 'ExecutorDetail')),
    page('/merchants', lazyRouteComponent(screens.merchants, 'Merchants')),
    page('/merchants/$id', lazyRouteComponent(screens.merchants, 'MerchantDetail')),
    page('/rates', lazyRouteComponent(screens.rates, 'Rates')),
    page('/rates/$currency', lazyRouteComponent(screens.rates, 'RateDetailPage')),
    page('/banks', lazyRouteComponent(screens.directory, 'Banks')),
    page('/providers', lazyRouteComponent(screens.directory, 'Providers')),
    page('/webhooks', lazyRouteComponent(screens.operations, 'Webhooks')),
    page('/ledger', lazyRouteComponent(screens.operations, 'LedgerCheck')),
    page('/users', lazyRouteComponent(screens.users, 'Users')),
    page('/audit', lazyRouteComponent(screens.audit, 'Audit')),
    page('/risk', lazyRouteComponent(screens.risk, 'Risk')),
    page('/security', Security),
  ]),
]);

const consoleRouter = createRouter({ routeTree, basepath: '/console' });

/**
 * An area for one kind of person (the executor's cabinet, the merchant cabinet): waits for who is
 * signed in, shows the sign-in form when no one is, says so to a person the area is not for, and
 * otherwise renders the area.
 */
function AreaGate({ forRole, notForYou, render }: { forRole: 'executor' | 'merchant'; notForYou: MessageKey; render: (me: Me) => ReactNode }) {
  const me = useMe();
  const { t } = useI18n();
  const logout = useLogout();
  if (me.isPending) {
    return <Waiting />;
  }
  if (!me.data) return <Login />;
  if (me.data.must_change_password) return <ChooseOwnPassword />;
  if (me.data.user.role !== forRole) {
    return (
      <Center mih="100vh" p="md">
        <Stack align="center">
          <Text>{t(notForYou)}</Text>
          <Button variant="light" onClick={() => logout.mutate()}>
            {t('nav.signOut')}
          </Button>
        </Stack>
      </Center>
    );
  }
  return render(me.data);
}

const CabinetShell = lazy(() => import('./routes/cabinet/CabinetShell').then((m) => ({ default: m.CabinetShell })));

/** The executor's cabinet: its own sign-in, its own screens, the same app. */
function CabinetRoot() {
  return (
    <AreaGate
      forRole="executor"
      notForYou="cabinet.notExecutor"
      render={(me) => (
        <Suspense fallback={<Waiting />}>
          <CabinetShell me={me} />
        </Suspense>
      )}
    />
  );
}

const cabinetRoot = createRootRoute({ component: () => <Outlet /> });
const cabinetApp = createRoute({ getParentRoute: () => cabinetRoot, id: 'cabinet', component: CabinetRoot });
const cabinetPage = (path: string, component: RouteComponent) => createRoute({ getParentRoute: () => cabinetApp, path, component });
const cabinetRouter = createRouter({
  routeTree: cabinetRoot.addChildren([
    cabinetApp.addChildren([
      cabinetPage('/', lazyRouteComponent(cabinetScreens.home, 'CabinetHome')),
      cabinetPage('/cards', lazyRouteComponent(cabinetScreens.cards, 'CabinetCards')),
      cabinetPage('/payouts', lazyRouteComponent(cabinetScreens.payouts, 'CabinetPayouts')),
      cabinetPage('/disputes', lazyRouteComponent(cabinetScreens.disputes, 'CabinetDisputes')),
      cabinetPage('/messages', lazyRouteComponent(cabinetScreens.messages, 'CabinetMessages')),
      cabinetPage('/deposit', lazyRouteComponent(cabinetScreens.deposit, 'CabinetDeposit')),
      cabinetPage('/phones', lazyRouteComponent(cabinetScreens.phones, 'CabinetPhones')),
      cabinetPage('/telegram', lazyRouteComponent(cabinetScreens.telegram, 'CabinetTelegram')),
      cabinetPage('/security', Security),
    ]),
  ]),
  basepath: '/cabinet',
});

const MERCHANT_NAV: Nav = [
  {
    section: 'nav.daily',
    items: [
      { to: '/', label: 'merchant.balances' },
      { to: '/payments', label: 'nav.payments' },
      { to: '/payouts', label: 'nav.payouts' },
      { to: '/webhooks', label: 'nav.webhooks' },
    ],
  },
  {
    section: 'merchant.integration',
    items: [
      { to: '/keys', label: 'merchant.keys' },
      { to: '/test', label: 'merchant.test' },
      { to: '/security', label: 'nav.security' },
    ],
  },
];

/** The merchant cabinet: the merchant's people, their own objects; the shared screens read the merchant's API (AreaProvider). */
function MerchantRoot() {
  return (
    <AreaGate
      forRole="merchant"
      notForYou="merchant.notMerchant"
      render={(me) => (
        <AreaProvider area="merchant">
          <Shell me={me} nav={MERCHANT_NAV} base="/merchant" forceSecurity={me.two_factor_required && !me.two_factor} />
        </AreaProvider>
      )}
    />
  );
}

const merchantRoot = createRootRoute({ component: () => <Outlet /> });
const merchantApp = createRoute({ getParentRoute: () => merchantRoot, id: 'merchant', component: MerchantRoot });
const merchantPage = (path: string, component: RouteComponent) => createRoute({ getParentRoute: () => merchantApp, path, component });
const merchantRouter = createRouter({
  routeTree: merchantRoot.addChildren([
    merchantApp.addChildren([
      merchantPage('/', lazyRouteComponent(merchantScreens.merchant, 'MerchantBalances')),
      merchantPage('/payments', lazyRouteComponent(screens.payments, 'Payments')),
      merchantPage('/payments/$id', lazyRouteComponent(screens.payments, 'PaymentDetail')),
      merchantPage('/payouts', lazyRouteComponent(merchantScreens.merchant, 'MerchantPayouts')),
      merchantPage('/webhooks', lazyRouteComponent(screens.operations, 'Webhooks')),
      merchantPage('/keys', lazyRouteComponent(merchantScreens.merchant, 'MerchantKeys')),
      merchantPage('/test', lazyRouteComponent(merchantScreens.test, 'MerchantTestConsole')),
      merchantPage('/security', Security),
    ]),
  ]),
  basepath: '/merchant',
});

const router = consoleRouter;

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: true } } });
// The server's per-response nonce lets Mantine's own <style> elements through the console's CSP.
const nonce = document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content;
// Modals lock page scrolling with a <style> element of their own (react-remove-scroll): the same nonce.
if (nonce) setNonce(nonce);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider getStyleNonce={() => nonce ?? ''} theme={{ respectReducedMotion: true }}>
      <QueryClientProvider client={queryClient}>
        <I18nProvider>
          <SignInAgain />
          {window.location.pathname.startsWith('/cabinet') ? (
            <RouterProvider router={cabinetRouter as never} />
          ) : window.location.pathname.startsWith('/merchant') ? (
            <RouterProvider router={merchantRouter as never} />
          ) : (
            <RouterProvider router={router} />
          )}
        </I18nProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
