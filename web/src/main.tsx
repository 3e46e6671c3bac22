import '@mantine/core/styles.css';
import '@mantine/charts/styles.css';
import { Button, Center, Loader, MantineProvider, Stack, Text } from '@mantine/core';
import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { createRootRoute, createRoute, createRouter, Outlet, RouterProvider } from '@tanstack/react-router';
import { setNonce } from 'get-nonce';
import { type ReactNode, StrictMode, useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { AreaProvider } from './api/area';
import { type Me, meKey, useLogout, useMe } from './api/auth';
import { setSignedOutHandler } from './api/client';
import { SignInAgain } from './components/SignInAgain';
import { I18nProvider, type MessageKey, useI18n } from './i18n';
import { CabinetCards } from './routes/cabinet/CabinetCards';
import { CabinetDeposit } from './routes/cabinet/CabinetDeposit';
import { CabinetHome } from './routes/cabinet/CabinetHome';
import { CabinetMessages } from './routes/cabinet/CabinetMessages';
import { CabinetPayouts } from './routes/cabinet/CabinetPayouts';
import { CabinetPhones } from './routes/cabinet/CabinetPhones';
import { CabinetShell } from './routes/cabinet/CabinetShell';
import { Audit } from './routes/console/Audit';
import { Dashboard } from './routes/console/Dashboard';
import { DeviceMessages } from './routes/console/DeviceMessages';
import { Banks, Providers } from './routes/console/Directory';
import { Disputes } from './routes/console/Disputes';
import { ExecutorDetail, Executors } from './routes/console/Executors';
import { MerchantDetail, Merchants } from './routes/console/Merchants';
import { Notifications } from './routes/console/Notifications';
import { LedgerCheck, Webhooks } from './routes/console/Operations';
import { PaymentDetail, Payments } from './routes/console/Payments';
import { Payouts } from './routes/console/Payouts';
import { RateDetailPage, Rates } from './routes/console/Rates';
import { Security } from './routes/console/Security';
import { Users } from './routes/console/Users';
import { Withdrawals } from './routes/console/Withdrawals';
import { ChooseOwnPassword, Login } from './routes/Login';
import { MerchantBalances, MerchantKeys, MerchantPayouts } from './routes/merchant/Merchant';
import { MerchantTestConsole } from './routes/merchant/TestConsole';
import { type Nav, Shell } from './routes/Shell';

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
    return (
      <Center mih="100vh">
        <Loader />
      </Center>
    );
  }
  if (!me.data) return <Login />;
  if (me.data.must_change_password) return <ChooseOwnPassword />;
  if (me.data.user.role === 'executor' || me.data.user.role === 'merchant') return <NotStaff role={me.data.user.role} />;
  if (me.data.two_factor_required && !me.data.two_factor) return <Shell me={me.data} forceSecurity />;
  return <Shell me={me.data} />;
}

const rootRoute = createRootRoute({ component: () => <Outlet /> });
const appRoute = createRoute({ getParentRoute: () => rootRoute, id: 'app', component: Root });
const page = (path: string, component: () => React.ReactNode) => createRoute({ getParentRoute: () => appRoute, path, component });

const routeTree = rootRoute.addChildren([
  appRoute.addChildren([
    page('/', Dashboard),
    page('/payments', Payments),
    page('/payments/$id', PaymentDetail),
    page('/disputes', Disputes),
    page('/notifications', Notifications),
    page('/device-messages', DeviceMessages),
    page('/payouts', Payouts),
    page('/withdrawals', Withdrawals),
    page('/executors', Executors),
    page('/executors/$id', ExecutorDetail),
    page('/merchants', Merchants),
    page('/merchants/$id', MerchantDetail),
    page('/rates', Rates),
    page('/rates/$currency', RateDetailPage),
    page('/banks', Banks),
    page('/providers', Providers),
    page('/webhooks', Webhooks),
    page('/ledger', LedgerCheck),
    page('/users', Users),
    page('/audit', Audit),
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
    return (
      <Center mih="100vh">
        <Loader />
      </Center>
    );
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

/** The executor's cabinet: its own sign-in, its own screens, the same app. */
function CabinetRoot() {
  return <AreaGate forRole="executor" notForYou="cabinet.notExecutor" render={(me) => <CabinetShell me={me} />} />;
}

const cabinetRoot = createRootRoute({ component: () => <Outlet /> });
const cabinetApp = createRoute({ getParentRoute: () => cabinetRoot, id: 'cabinet', component: CabinetRoot });
const cabinetPage = (path: string, component: () => React.ReactNode) => createRoute({ getParentRoute: () => cabinetApp, path, component });
const cabinetRouter = createRouter({
  routeTree: cabinetRoot.addChildren([
    cabinetApp.addChildren([
      cabinetPage('/', CabinetHome),
      cabinetPage('/cards', CabinetCards),
      cabinetPage('/payouts', CabinetPayouts),
      cabinetPage('/messages', CabinetMessages),
      cabinetPage('/deposit', CabinetDeposit),
      cabinetPage('/phones', CabinetPhones),
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
const merchantPage = (path: string, component: () => React.ReactNode) => createRoute({ getParentRoute: () => merchantApp, path, component });
const merchantRouter = createRouter({
  routeTree: merchantRoot.addChildren([
    merchantApp.addChildren([
      merchantPage('/', MerchantBalances),
      merchantPage('/payments', Payments),
      merchantPage('/payments/$id', PaymentDetail),
      merchantPage('/payouts', MerchantPayouts),
      merchantPage('/webhooks', Webhooks),
      merchantPage('/keys', MerchantKeys),
      merchantPage('/test', MerchantTestConsole),
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
