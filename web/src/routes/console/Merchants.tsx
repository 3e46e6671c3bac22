import { Alert, Anchor, Button, Card, Code, Group, NumberInput, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { useCreateMerchant, useMerchant, useMerchants } from '../../api/merchants';
import { useCreateTerminal, useRotateTerminalKey } from '../../api/terminals';
import { CreateByName } from '../../components/CreateByName';
import { ErrorAlert, useFieldError } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { Statement } from '../../components/Statement';
import { useI18n } from '../../i18n';
import { TerminalRoutes } from './Directory';
import { TerminalRates } from './Rates';

const CURRENCIES = ['RUB', 'KZT', 'AZN', 'TJS'];

/** A new terminal of the merchant: its API key is shown once. */
function NewTerminal({ merchantId }: { merchantId: string }) {
  const { t } = useI18n();
  const create = useCreateTerminal();
  const fieldError = useFieldError(create.error);
  const [form, setForm] = useState({ name: '', currency: 'RUB', payin_rate: 0 as number | string, payout_rate: 0 as number | string });
  return (
    <Card withBorder>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            { merchantId, name: form.name.trim(), currency: form.currency, payin_rate: Number(form.payin_rate), payout_rate: Number(form.payout_rate) },
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
      <Table striped>
        <Table.Tbody>
          {list.data?.merchants.map((m) => (
            <Table.Tr key={m.id}>
              <Table.Td>
                <Anchor component={Link} to={`/merchants/${m.id}` as never}>
                  {m.name}
                </Anchor>
              </Table.Td>
              <Table.Td>
                {m.terminals} {t('merchants.terminals')}
              </Table.Td>
              <Table.Td>{f.date(m.created_at)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
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
          <Text fw={500}>{terminal.name}</Text>
          <Text size="sm">
            <Money value={terminal.balance} currency="USDT" /> · {t('executors.frozen')} <Money value={terminal.balance_frozen} currency="USDT" /> ·{' '}
            {terminal.payment_currency} · {t('merchants.payinRateShort')} {f.percent(terminal.payin_rate, { digits: 2 })} · {t('merchants.payoutRateShort')}{' '}
            {f.percent(terminal.payout_rate, { digits: 2 })}
          </Text>
          <Button mt="xs" mb="sm" size="xs" variant="light" w="fit-content" onClick={() => rotate.mutate(terminal.id)}>
            {t('merchants.rotateKey')}
          </Button>
          <TerminalRoutes terminalId={terminal.id} />
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
