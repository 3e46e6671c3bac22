import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import {
  type MerchantTerminal,
  useCreatePayout,
  useMerchantMe,
  useMerchantPayouts,
  useMerchantTransfer,
  useMerchantWithdraw,
  useMerchantWithdrawals,
  useRotateApiKey,
  useRotateSecret,
  useTestPayoutAction,
} from '../../api/merchant';
import { CsvLink } from '../../components/CsvLink';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { Statement } from '../../components/Statement';
import { StatusBadge, useStatusName } from '../../components/StatusBadge';
import { TestBadge } from '../../components/TestBadge';
import { isTronAddress, TronAddressInput } from '../../components/TronAddressInput';
import { useNames } from '../../components/useNames';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

function terminalOptions(terminals: MerchantTerminal[] | undefined, t?: (key: 'test.badge') => string) {
  return (terminals ?? []).map((terminal) => ({ value: terminal.id, label: terminal.is_test && t ? `${terminal.name} · ${t('test.badge')}` : terminal.name }));
}

/** Move USDT between two of the merchant's terminals (asks to confirm it is the person). */
function TransferForm({ terminals }: { terminals: MerchantTerminal[] }) {
  const { t } = useI18n();
  const transfer = useMerchantTransfer();
  const [from, setFrom] = useState<string | null>(null);
  const [to, setTo] = useState<string | null>(null);
  const [amount, setAmount] = useState<string | number>('');
  return (
    <Card withBorder>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (from && to) transfer.mutate({ from_terminal_id: from, to_terminal_id: to, amount: Number(amount) }, { onSuccess: () => setAmount('') });
        }}
      >
        <Stack gap="xs">
          <Title order={4}>{t('merchant.transfer')}</Title>
          <Group grow align="flex-end">
            <Select label={t('merchant.from')} data={terminalOptions(terminals)} value={from} onChange={setFrom} />
            <Select label={t('merchant.to')} data={terminalOptions(terminals).filter((o) => o.value !== from)} value={to} onChange={setTo} />
            <NumberInput label={t('merchant.amountUsdt')} value={amount} onChange={setAmount} min={0} decimalScale={6} />
          </Group>
          <Button type="submit" w="fit-content" disabled={!from || !to || !Number(amount)} loading={transfer.isPending}>
            {t('merchant.transferSend')}
          </Button>
          <ErrorAlert error={transfer.error} />
          {transfer.isSuccess && <Text c="green">{t('merchant.transferDone')}</Text>}
        </Stack>
      </form>
    </Card>
  );
}

/** Withdraw USDT from a terminal to a TRC-20 wallet (two-factor and a fresh confirmation). */
function WithdrawForm({ terminals }: { terminals: MerchantTerminal[] }) {
  const { t } = useI18n();
  const withdraw = useMerchantWithdraw();
  const [terminal, setTerminal] = useState<string | null>(null);
  const [amount, setAmount] = useState<string | number>('');
  const [address, setAddress] = useState('');
  const fee = terminals.find((x) => x.id === terminal)?.withdrawal_fee;
  return (
    <Card withBorder>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (terminal) withdraw.mutate({ terminal_id: terminal, amount: Number(amount), address: address.trim() }, { onSuccess: () => setAmount('') });
        }}
      >
        <Stack gap="xs">
          <Title order={4}>{t('merchant.withdraw')}</Title>
          <Text size="xs" c="dimmed">
            {t('merchant.withdrawHint')}
          </Text>
          <Group grow align="flex-end">
            <Select label={t('merchant.terminal')} data={terminalOptions(terminals)} value={terminal} onChange={setTerminal} />
            <NumberInput
              label={t('merchant.amountUsdt')}
              description={fee !== undefined ? `${t('merchant.fee')}: ${fee} USDT` : undefined}
              value={amount}
              onChange={setAmount}
              min={0}
              decimalScale={6}
            />
          </Group>
          <TronAddressInput label={t('withdrawals.address')} value={address} onChange={setAddress} />
          <Button type="submit" w="fit-content" disabled={!terminal || !Number(amount) || !isTronAddress(address)} loading={withdraw.isPending}>
            {t('merchant.withdrawSend')}
          </Button>
          <ErrorAlert error={withdraw.error} />
          {withdraw.isSuccess && <Text c="green">{t('cabinet.withdrawAsked')}</Text>}
        </Stack>
      </form>
    </Card>
  );
}

/** Balances: each terminal's available and frozen USDT, its statement, moving money between terminals and out. */
export function MerchantBalances() {
  const { t } = useI18n();
  const names = useNames();
  const me = useMerchantMe();
  const withdrawals = useMerchantWithdrawals();
  const terminals = me.data?.terminals ?? [];
  const [chosen, setChosen] = useState<string | null>(null);
  const shown = chosen ?? terminals[0]?.id ?? null;
  return (
    <Stack>
      <Title order={2}>{me.data?.merchant.name ?? t('merchant.balances')}</Title>
      <ErrorAlert error={me.error} />
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
        {terminals.map((terminal) => (
          <Card
            withBorder
            key={terminal.id}
            aria-label={`terminal ${terminal.name}`}
            onClick={() => setChosen(terminal.id)}
            style={{ cursor: 'pointer', outline: terminal.id === shown ? '2px solid var(--mantine-color-blue-5)' : undefined }}
          >
            <Group justify="space-between">
              <Text fw={600}>{terminal.name}</Text>
              <Group gap={4}>
                <TestBadge show={terminal.is_test} />
                {!terminal.is_active && <Badge color="gray">{names.onOff(false)}</Badge>}
              </Group>
            </Group>
            <Title order={3}>
              <Money value={terminal.balance} currency="USDT" />
            </Title>
            <Text size="sm" c="dimmed">
              {t('executors.frozen')}: <Money value={terminal.balance_frozen} currency="USDT" />
            </Text>
            <Text size="xs" c="dimmed" ff="monospace">
              {terminal.id}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <TransferForm terminals={terminals} />
        <WithdrawForm terminals={terminals} />
      </SimpleGrid>
      {(withdrawals.data?.withdrawals.length ?? 0) > 0 && (
        <Card withBorder>
          <Group mb="sm">
            <Title order={4}>{t('withdrawals.title')}</Title>
            <CsvLink path="/merchant/v1/withdrawals" query={{}} />
          </Group>
          <DataTable
            rows={withdrawals.data?.withdrawals ?? []}
            loaded={withdrawals.isSuccess}
            rowKey={(w) => w.id}
            columns={[
              { header: t('common.created'), cell: (w) => <When at={w.created_at} /> },
              { header: t('merchant.terminal'), cell: (w) => terminals.find((x) => x.id === w.terminal_id)?.name ?? w.terminal_id },
              { header: t('common.amount'), cell: (w) => <Money value={w.amount} currency="USDT" /> },
              { header: t('withdrawals.address'), cell: (w) => <Text size="xs">{w.address}</Text> },
              { header: t('common.status'), cell: (w) => <StatusBadge status={w.status} /> },
              { header: t('withdrawals.txHash'), cell: (w) => <Text size="xs">{w.tx_hash ?? ''}</Text> },
            ]}
          />
        </Card>
      )}
      {shown && (
        <Card withBorder>
          <Text size="sm" c="dimmed">
            {terminals.find((x) => x.id === shown)?.name}
          </Text>
          <Statement path={`/merchant/v1/terminals/${shown}/statement`} />
        </Card>
      )}
    </Stack>
  );
}

const PAYOUT_STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'];

/** A new payout through one of the merchant's terminals (as POST /v1/payouts with its key); one Idempotency-Key per intended payout. */
function PayoutForm({ terminals }: { terminals: MerchantTerminal[] }) {
  const { t } = useI18n();
  const create = useCreatePayout();
  const [terminal, setTerminal] = useState<string | null>(null);
  const [extId, setExtId] = useState('');
  const [amount, setAmount] = useState<string | number>('');
  const [method, setMethod] = useState<'card' | 'sbp'>('card');
  const [requisites, setRequisites] = useState('');
  const [holder, setHolder] = useState('');
  const [bank, setBank] = useState('');
  const [notifyUrl, setNotifyUrl] = useState('');
  const ready = terminal && extId.trim() && Number(amount) > 0 && requisites.trim() && holder.trim() && (method === 'card' || bank.trim());
  return (
    <Card withBorder>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!ready) return;
          create.mutate(
            {
              terminal_id: terminal,
              ext_id: extId.trim(),
              amount: Number(amount),
              method,
              requisites: requisites.trim(),
              holder_name: holder.trim(),
              ...(bank.trim() ? { bank: bank.trim() } : {}),
              ...(notifyUrl.trim() ? { notify_url: notifyUrl.trim() } : {}),
            },
            { onSuccess: () => setExtId('') },
          );
        }}
      >
        <Stack gap="xs">
          <Title order={4}>{t('payout.create')}</Title>
          <Text size="xs" c="dimmed">
            {t('payout.createHint')}
          </Text>
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
            <Select label={t('merchant.terminal')} data={terminalOptions(terminals, t)} value={terminal} onChange={setTerminal} />
            <TextInput label={t('payout.extId')} value={extId} onChange={(e) => setExtId(e.currentTarget.value)} maxLength={255} />
            <NumberInput label={t('payout.amount')} value={amount} onChange={setAmount} min={0} decimalScale={2} />
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                {t('payout.method')}
              </Text>
              <SegmentedControl
                value={method}
                onChange={(v) => setMethod(v as 'card' | 'sbp')}
                data={[
                  { value: 'card', label: 'card' },
                  { value: 'sbp', label: 'sbp' },
                ]}
              />
            </Stack>
            <TextInput
              label={method === 'card' ? t('payout.card') : t('payout.phone')}
              value={requisites}
              onChange={(e) => setRequisites(e.currentTarget.value)}
              placeholder={method === 'card' ? '2200 7001 2345 6781' : '+7 900 123-45-67'}
            />
            <TextInput label={t('payout.holder')} value={holder} onChange={(e) => setHolder(e.currentTarget.value)} maxLength={200} />
            <TextInput label={t('payout.bank')} value={bank} onChange={(e) => setBank(e.currentTarget.value)} placeholder="sberbank" />
            <TextInput label="notify_url" value={notifyUrl} onChange={(e) => setNotifyUrl(e.currentTarget.value)} placeholder="https://…" />
          </SimpleGrid>
          <Button type="submit" w="fit-content" disabled={!ready} loading={create.isPending}>
            {t('payout.send')}
          </Button>
          <ErrorAlert error={create.error} />
          {create.isSuccess && <Text c="green">{t('payout.created')}</Text>}
        </Stack>
      </form>
    </Card>
  );
}

/** The merchant's payouts, newest first, by status; CSV of the same view. */
export function MerchantPayouts() {
  const { t } = useI18n();
  const names = useNames();
  const { statusName } = useStatusName();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, 50);
  const status = filters.status ?? 'all';
  const list = useMerchantPayouts({ status: status === 'all' ? undefined : status, ...page });
  const me = useMerchantMe();
  const act = useTestPayoutAction();
  const rows = list.data?.payouts ?? [];
  return (
    <Stack>
      <ListHeader
        title={t('nav.payouts')}
        csv={{ path: '/merchant/v1/payouts', query: { status: status === 'all' ? undefined : status, offset: page.offset } }}
        status={{
          value: status,
          onChange: (value) => setFilters({ status: value }),
          options: ['all', ...PAYOUT_STATUSES].map((value) => ({ value, label: value === 'all' ? t('common.all') : statusName(value) })),
        }}
      />
      <PayoutForm terminals={me.data?.terminals ?? []} />
      <ErrorAlert error={list.error ?? act.error} />
      <DataTable
        rows={rows}
        loaded={list.isSuccess}
        rowKey={(p) => p.id}
        columns={[
          {
            header: t('payments.field.ext_id'),
            cell: (p) => (
              <Group gap={6} wrap="nowrap">
                {p.ext_id}
                <TestBadge show={p.is_test} />
              </Group>
            ),
          },
          { header: t('common.amount'), cell: (p) => <Money value={p.amount} currency={p.currency} /> },
          { header: t('payouts.requisites'), cell: (p) => [names.method(p.method), names.card(p.requisites), p.holder_name].filter(Boolean).join(' · ') },
          { header: t('common.status'), cell: (p) => <StatusBadge status={p.status} /> },
          { header: t('payouts.reason'), cell: (p) => p.failure_reason ?? '' },
          { header: t('common.created'), cell: (p) => <When at={p.created_at} /> },
          {
            header: t('common.actions'),
            // Test mode: a pending test payout is settled here, as an executor would settle a live one.
            cell: (p) =>
              p.is_test && (p.status === 'pending' || p.status === 'processing') ? (
                <Group gap={4} wrap="nowrap">
                  {(['complete', 'fail'] as const).map((event) => (
                    <Button
                      key={event}
                      size="compact-sm"
                      variant="light"
                      color={event === 'complete' ? 'green' : 'red'}
                      loading={act.isPending && act.variables?.id === p.id && act.variables.event === event}
                      disabled={act.isPending}
                      aria-label={`${t(event === 'complete' ? 'test.payoutComplete' : 'test.payoutFail')} ${p.ext_id}`}
                      onClick={() => act.mutate({ id: p.id, event })}
                    >
                      {t(event === 'complete' ? 'test.payoutComplete' : 'test.payoutFail')}
                    </Button>
                  ))}
                </Group>
              ) : null,
          },
        ]}
      />
      <Pager
        offset={page.offset}
        limit={page.limit}
        count={rows.length}
        total={list.data?.total}
        onChange={(offset) => setFilters({ offset: String(offset) })}
      />
    </Stack>
  );
}

const GRACE = [
  { value: '0', label: '0' },
  { value: '3600', label: '1 h' },
  { value: '86400', label: '24 h' },
  { value: '604800', label: '7 d' },
];

/** A new key, shown once: copy it now; the old one works until the time shown. */
function ShownOnce({ label, value, until }: { label: string; value: string; until: string }) {
  const { t } = useI18n();
  return (
    <Alert color="yellow" title={t('merchant.shownOnce')}>
      <Text size="xs">{label}</Text>
      <Code block>{value}</Code>
      <Text size="xs" mt="xs">
        {t('merchant.oldValidUntil')}: <When at={until} />
      </Text>
    </Alert>
  );
}

/** API keys: rotate a terminal's key or the merchant's secret key, with a grace period for the old one (two-factor). */
export function MerchantKeys() {
  const { t } = useI18n();
  const me = useMerchantMe();
  const rotateKey = useRotateApiKey();
  const rotateSecret = useRotateSecret();
  const [grace, setGrace] = useState<string | null>('3600');
  return (
    <Stack>
      <Title order={2}>{t('merchant.keys')}</Title>
      <Text size="sm" c="dimmed">
        {t('merchant.keysHint')}
      </Text>
      <Select label={t('merchant.grace')} data={GRACE} value={grace} onChange={setGrace} w={200} />
      <ErrorAlert error={rotateKey.error ?? rotateSecret.error} />
      {rotateKey.data && <ShownOnce label="X-Identity (API key)" value={rotateKey.data.api_key} until={rotateKey.data.previous_valid_until} />}
      {rotateSecret.data && <ShownOnce label="secret key" value={rotateSecret.data.secret_key} until={rotateSecret.data.previous_valid_until} />}
      <Card withBorder>
        <Stack gap="xs">
          {me.data?.terminals.map((terminal) => (
            <Group key={terminal.id} justify="space-between">
              <div>
                <Text fw={600}>{terminal.name}</Text>
                <Text size="xs" c="dimmed" ff="monospace">
                  {terminal.id}
                </Text>
              </div>
              <Button
                variant="light"
                loading={rotateKey.isPending && rotateKey.variables?.terminalId === terminal.id}
                onClick={() => rotateKey.mutate({ terminalId: terminal.id, graceSeconds: Number(grace ?? 0) })}
                aria-label={`${t('merchant.rotateKey')} ${terminal.name}`}
              >
                {t('merchant.rotateKey')}
              </Button>
            </Group>
          ))}
        </Stack>
      </Card>
      <Card withBorder>
        <Group justify="space-between">
          <div>
            <Text fw={600}>{t('merchant.secret')}</Text>
            <Text size="xs" c="dimmed">
              {t('merchant.secretHint')}
            </Text>
          </div>
          <Button color="red" variant="light" loading={rotateSecret.isPending} onClick={() => rotateSecret.mutate(Number(grace ?? 0))}>
            {t('merchant.rotateSecret')}
          </Button>
        </Group>
      </Card>
      {me.data && (
        <Card withBorder>
          <Text fw={600}>{t('merchant.signedUrl')}</Text>
          <Text size="xs" c="dimmed">
            {t('merchant.signedUrlHint')}
          </Text>
          <Code block mt="xs">
            {`${me.data.api_base_url.replace(/\/+$/, '')}/v1/payments`}
          </Code>
        </Card>
      )}
      <Text size="sm">
        <Anchor href="/docs">{t('merchant.docs')}</Anchor>
      </Text>
    </Stack>
  );
}
