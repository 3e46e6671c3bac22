import { Alert, Anchor, Button, Card, Code, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useMerchant, useMerchants, useRotateTerminalKey } from '../../api/operations';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { Statement } from '../../components/Statement';
import { useI18n } from '../../i18n';
import { TerminalRoutes } from './Directory';

export function Merchants() {
  const { t } = useI18n();
  const list = useMerchants();
  return (
    <Stack>
      <Title order={2}>{t('nav.merchants')}</Title>
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
              <Table.Td>{new Date(m.created_at).toLocaleDateString()}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

/** A merchant's terminals with their USDT balances and rates; an admin rotates a terminal's API key (shown once). */
export function MerchantDetail() {
  const { t } = useI18n();
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
      {merchant.data?.terminals.map((terminal) => (
        <Card withBorder key={terminal.id}>
          <Text fw={500}>{terminal.name}</Text>
          <Text size="sm">
            <Money value={terminal.balance} currency="USDT" /> · {t('executors.frozen')} <Money value={terminal.balance_frozen} currency="USDT" /> ·{' '}
            {terminal.payment_currency} · pay-in {terminal.payin_rate}% · payout {terminal.payout_rate}%
          </Text>
          <Button mt="xs" mb="sm" size="xs" variant="light" w="fit-content" onClick={() => rotate.mutate(terminal.id)}>
            {t('merchants.rotateKey')}
          </Button>
          <TerminalRoutes terminalId={terminal.id} />
          <Stack mt="md">
            <Statement path={`/admin/v1/terminals/${terminal.id}/statement`} />
          </Stack>
        </Card>
      ))}
    </Stack>
  );
}
