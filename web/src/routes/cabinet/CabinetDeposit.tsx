import { Badge, Button, Card, Code, Group, NumberInput, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { type StatementEntry, useMyBalance, useMyStatement, useMyWithdrawals, useRequestWithdrawal } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { useStatusName } from '../../components/StatusBadge';
import { useStatementLine } from '../../components/statementLine';
import { isTronAddress, TronAddressInput } from '../../components/TronAddressInput';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

const PAGE = 30;

function Entry({ entry }: { entry: StatementEntry }) {
  const { t } = useI18n();
  const line = useStatementLine();
  const about = line.about(entry);
  return (
    <Group justify="space-between" wrap="nowrap" py={4} style={{ borderBottom: '1px solid var(--mantine-color-default-border)' }}>
      <div style={{ minWidth: 0 }}>
        <Text size="sm">{line.action(entry)}</Text>
        {about && <Text size="sm">{about}</Text>}
        <Text size="xs" c="dimmed">
          <When at={entry.created_at} />
          {entry.account === 'frozen' ? ` · ${t('executors.frozen')}` : ''}
        </Text>
      </div>
      <div style={{ textAlign: 'right' }}>
        <Text size="sm" fw={600} c={Number(entry.amount) < 0 ? 'red' : 'green'}>
          {Number(entry.amount) > 0 ? '+' : ''}
          <Money value={entry.amount} />
        </Text>
        <Text size="xs" c="dimmed">
          <Money value={entry.balance_after} />
        </Text>
      </div>
    </Group>
  );
}

/** Ask to withdraw: the amount and the TRC-20 wallet, checked here for shape and by Kassir for the balance. */
function WithdrawForm({ available }: { available: number | undefined }) {
  const { t, f } = useI18n();
  const request = useRequestWithdrawal();
  const [amount, setAmount] = useState<string | number>('');
  const [address, setAddress] = useState('');
  return (
    <Card withBorder padding="sm">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          request.mutate({ amount: Number(amount), address: address.trim() }, { onSuccess: () => setAmount('') });
        }}
      >
        <Stack gap="xs">
          <Title order={5}>{t('cabinet.withdraw')}</Title>
          <NumberInput
            label={t('cabinet.withdrawAmount')}
            description={available !== undefined ? `${t('executors.available')}: ${f.money(available, 'USDT')}` : undefined}
            value={amount}
            onChange={setAmount}
            min={0}
            decimalScale={6}
            inputMode="decimal"
          />
          <TronAddressInput label={t('withdrawals.address')} value={address} onChange={setAddress} />
          <Button type="submit" disabled={!Number(amount) || !isTronAddress(address)} loading={request.isPending}>
            {t('cabinet.withdrawSend')}
          </Button>
          <ErrorAlert error={request.error} />
          {request.data && <Text c="green">{t('cabinet.withdrawAsked')}</Text>}
        </Stack>
      </form>
    </Card>
  );
}

const STATUS_COLOR: Record<string, string> = { pending: 'blue', processing: 'blue', completed: 'green', failed: 'red', cancelled: 'gray' };

/** The deposit: what is free and what is held, where to top it up, withdrawals, and every posting. */
export function CabinetDeposit() {
  const { t } = useI18n();
  const { statusName } = useStatusName();
  const balance = useMyBalance();
  const withdrawals = useMyWithdrawals();
  const [limit, setLimit] = useState(PAGE);
  const statement = useMyStatement(limit);
  const b = balance.data;
  return (
    <Stack>
      <Card withBorder>
        <Text size="sm" c="dimmed">
          {t('executors.available')}
        </Text>
        <Title order={2}>
          <Money value={b?.balance} currency="USDT" />
        </Title>
        <Text size="sm" c="dimmed">
          {t('executors.frozen')}: <Money value={b?.balance_frozen} currency="USDT" />
          {b && Number(b.credit_limit) > 0 && (
            <>
              {' · '}
              {t('cabinet.credit')}: <Money value={b.credit_limit} currency="USDT" />
            </>
          )}
        </Text>
        {b?.deposit_address && (
          <>
            <Text size="xs" c="dimmed" mt="xs">
              {t('cabinet.topUp')}
            </Text>
            <Code block style={{ overflowWrap: 'anywhere', whiteSpace: 'normal' }}>
              {b.deposit_address}
            </Code>
          </>
        )}
        <ErrorAlert error={balance.error} />
      </Card>
      <WithdrawForm available={b?.balance} />
      {(withdrawals.data?.withdrawals.length ?? 0) > 0 && <Title order={4}>{t('withdrawals.title')}</Title>}
      {withdrawals.data?.withdrawals.map((w) => (
        <Card withBorder padding="xs" key={w.id}>
          <Group justify="space-between" wrap="nowrap">
            <div style={{ minWidth: 0 }}>
              <Text fw={600}>
                <Money value={w.amount} currency="USDT" />
              </Text>
              <Text size="xs" c="dimmed" truncate>
                <When at={w.created_at} /> · {w.address}
              </Text>
            </div>
            <Badge variant="light" color={STATUS_COLOR[w.status] ?? 'gray'} style={{ flexShrink: 0 }}>
              {statusName(w.status)}
            </Badge>
          </Group>
        </Card>
      ))}
      <Title order={4}>{t('executors.statement')}</Title>
      <ErrorAlert error={statement.error} />
      {statement.isSuccess && statement.data.entries.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      <div>
        {statement.data?.entries.map((entry) => (
          <Entry key={`${entry.id}-${entry.account}`} entry={entry} />
        ))}
      </div>
      {statement.data && statement.data.total > statement.data.entries.length && (
        <Button variant="light" onClick={() => setLimit(limit + PAGE)} loading={statement.isFetching}>
          {t('cabinet.more')}
        </Button>
      )}
    </Stack>
  );
}
