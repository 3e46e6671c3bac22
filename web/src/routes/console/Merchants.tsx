import { Alert, Anchor, Button, Card, Checkbox, Code, Group, NumberInput, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { useCreateMerchant, useMerchant, useMerchants } from '../../api/merchants';
import { useCreateTerminal, useRotateTerminalKey } from '../../api/terminals';
import { CreateByName } from '../../components/CreateByName';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert, useFieldError } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { Statement } from '../../components/Statement';
import { TestBadge } from '../../components/TestBadge';
import { useI18n } from '../../i18n';
import { TerminalRoutes } from './Directory';
import { TerminalRates } from './Rates';
import { TerminalSettings } from './TerminalSettings';

const CURRENCIES = ['RUB', 'KZT', 'AZN', 'TJS'];

/** A new terminal of the merchant: its API key is shown once. */
function NewTerminal({ merchantId }: { merchantId: string }) {
  const { t } = useI18n();
  const create = useCreateTerminal();
  const fieldError = useFieldError(create.error);
  const [form, setForm] = useState({ name: '', currency: 'RUB', payin_rate: 0 as number | string, payout_rate: 0 as number | string, is_test: false });
  return (
    <Card withBorder>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            {
              merchantId,
              name: form.name.trim(),
              currency: form.currency,
              payin_rate: Number(form.payin_rate),
              payout_rate: Number(form.payout_rate),
              is_test: form.is_test,
            },
            { onSuccess: () => setForm({ ...form, name: '' }) },
          );
        }}
      >
        <Group align="flex-end">
          <TextInput
            label={t('banks.name')}
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
            error={fieldError('name')}
            w={200}
          />
          <Select
            label={t('rates.currency')}
            data={CURRENCIES}
            value={form.currency}
            onChange={(v) => setForm({ ...form, currency: v ?? 'RUB' })}
            w={100}
            allowDeselect={false}
          />
          <NumberInput
            label={t('merchants.payinRate')}
            value={form.payin_rate}
            onChange={(v) => setForm({ ...form, payin_rate: v })}
            error={fieldError('payin_rate')}
            decimalScale={2}
            w={130}
          />
          <NumberInput
            label={t('merchants.payoutRate')}
            value={form.payout_rate}
            onChange={(v) => setForm({ ...form, payout_rate: v })}
            error={fieldError('payout_rate')}
            decimalScale={2}
            w={130}
          />
          <Checkbox
            label={t('test.terminal')}
            description={t('test.terminalHint')}
            checked={form.is_test}
            onChange={(e) => setForm({ ...form, is_test: e.currentTarget.checked })}
            maw={320}
          />
          <Button type="submit" loading={create.isPending} disabled={!form.name.trim()}>
            {t('merchants.newTerminal')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={create.error} onFields={['name', 'payin_rate', 'payout_rate']} />
      {create.data && (
        <Alert mt="sm" color="yellow" title={`${create.data.name}: ${t('merchants.keyOnce')}`}>
          <Code>{create.data.api_key}</Code>
        </Alert>
      )}
    </Card>
  );
}

export function Merchants() {
  const { t, f } = useI18n();
  const list = useMerchants();
  const create = useCreateMerchant();
  return (
    <Stack>
      <Title order={2}>{t('nav.merchants')}</Title>
      <CreateByName label={t('merchants.create')} secretTitle={t('merchants.secretOnce')} create={create} />
      <ErrorAlert error={list.error} />
      <DataTable
        rows={list.data?.merchants ?? []}
        loaded={list.isSuccess}
        rowKey={(m) => m.id}
        rowLabel={(m) => `merchant ${m.name}`}
        minWidth={0}
        columns={[
          {
            header: t('banks.name'),
            cell: (m) => (
              <Anchor component={Link} to={`/merchants/${m.id}` as never}>
                {m.name}
              </Anchor>
            ),
          },
          { header: '', cell: (m) => `${m.terminals} ${t('merchants.terminals')}` },
          { header: t('common.created'), cell: (m) => f.date(m.created_at) },
        ]}
      />
    </Stack>
  );
}

/** A merchant's terminals with their USDT balances and rates; an admin rotates a terminal's API key (shown once). */
export function MerchantDetail() {
  const { t, f } = useI18n();
  const { id } = useParams({ strict: false }) as { id: string };
  const merchant = useMerchant(id);
  const rotate = useRotateTerminalKey();
  return (
    <Stack>
      <ErrorAlert error={merchant.error ?? rotate.error} />
      <Title order={3}>{merchant.data?.name}</Title>
      {rotate.data && (
        <Alert color="yellow" title={t('merchants.keyOnce')}>
          <Code>{rotate.data.api_key}</Code>
        </Alert>
      )}
      <NewTerminal merchantId={id} />
      {merchant.data?.terminals.map((terminal) => (
        <Card withBorder key={terminal.id} id={`terminal-${terminal.id}`}>
          <Group gap="xs">
            <Text fw={500}>{terminal.name}</Text>
            <TestBadge show={terminal.is_test} />
          </Group>
          <Text size="sm">
            <Money value={terminal.balance} currency="USDT" /> · {t('executors.frozen')} <Money value={terminal.balance_frozen} currency="USDT" /> ·{' '}
            {terminal.payment_currency} · {t('merchants.payinRateShort')} {f.percent(terminal.payin_rate, { digits: 2 })} · {t('merchants.payoutRateShort')}{' '}
            {f.percent(terminal.payout_rate, { digits: 2 })}
          </Text>
          <Button mt="xs" mb="sm" size="xs" variant="light" w="fit-content" onClick={() => rotate.mutate(terminal.id)}>
            {t('merchants.rotateKey')}
          </Button>
          <TerminalSettings terminal={terminal} />
          <Stack mt="md">
            <TerminalRoutes terminalId={terminal.id} />
          </Stack>
          <Stack mt="md">
            <TerminalRates terminalId={terminal.id} name={terminal.name} />
          </Stack>
          <Stack mt="md">
            <Statement path={`/admin/v1/terminals/${terminal.id}/statement`} />
          </Stack>
        </Card>
      ))}
    </Stack>
  );
}
