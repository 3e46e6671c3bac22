import { Anchor, Badge, Button, Card, Group, NumberInput, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import {
  type RequisiteView,
  useAdjustExecutor,
  useCreateExecutor,
  useExecutor,
  useExecutors,
  useSwitchRequisite,
  useUpdateExecutor,
} from '../../api/executors';
import { CreateByName } from '../../components/CreateByName';
import { CsvLink } from '../../components/CsvLink';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert, useFieldError } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { Statement } from '../../components/Statement';
import { useNames } from '../../components/useNames';
import { useI18n } from '../../i18n';
import { ExecutorPhones } from './ExecutorPhones';
import { RequisiteForm } from './RequisiteForm';
import { checkedClasses, classesInput, TrafficClassesInput } from './TrafficClasses';

/** Executors with their deposits at a glance. */
export function Executors() {
  const { t } = useI18n();
  const names = useNames();
  const list = useExecutors();
  const create = useCreateExecutor();
  return (
    <Stack>
      <Group>
        <Title order={2}>{t('nav.executors')}</Title>
        <CsvLink path="/admin/v1/executors" query={{}} />
      </Group>
      <CreateByName label={t('executors.create')} secretTitle={t('executors.tokenOnce')} create={create} />
      <ErrorAlert error={list.error} />
      <DataTable
        rows={list.data?.executors ?? []}
        loaded={list.isSuccess}
        rowKey={(e) => e.id}
        minWidth={700}
        columns={[
          {
            header: t('executors.name'),
            cell: (e) => (
              <Anchor component={Link} to={`/executors/${e.id}` as never}>
                {e.name}
              </Anchor>
            ),
          },
          { header: t('executors.available'), cell: (e) => <Money value={e.balance} currency="USDT" /> },
          { header: t('executors.frozen'), cell: (e) => <Money value={e.balance_frozen} currency="USDT" /> },
          { header: t('executors.requisites'), cell: (e) => e.requisites ?? '—' },
          {
            header: t('common.status'),
            cell: (e) =>
              e.why_not?.includes('dispute_ratio') ? (
                <Badge color="red">{t('executors.disputeRatio')}</Badge>
              ) : !e.is_active ? (
                <Badge color="gray">{names.onOff(false)}</Badge>
              ) : e.why_not?.includes('dispute_cap') || e.why_not?.includes('dispute_uncovered') ? (
                <Badge color="orange">
                  {t('executors.disputeStop')} {e.open_disputes}/{e.max_open_disputes}
                </Badge>
              ) : e.is_paused ? (
                <Badge color="yellow">{t('executors.paused')}</Badge>
              ) : e.devices_silent ? (
                <Badge color="orange">{t('executors.phonesSilent')}</Badge>
              ) : (
                <Badge color="green">{names.onOff(true)}</Badge>
              ),
          },
        ]}
      />
    </Stack>
  );
}

function Adjust({ id }: { id: string }) {
  const { t } = useI18n();
  const adjust = useAdjustExecutor();
  const fieldError = useFieldError(adjust.error);
  const [amount, setAmount] = useState<number | string>('');
  const [reason, setReason] = useState('');
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        adjust.mutate({ id, amount: Number(amount), reason }, { onSuccess: () => setAmount('') });
      }}
    >
      <Group align="flex-end">
        <NumberInput label={t('executors.adjustAmount')} value={amount} onChange={setAmount} decimalScale={6} error={fieldError('amount')} w={200} />
        <TextInput label={t('payouts.reason')} value={reason} onChange={(e) => setReason(e.currentTarget.value)} error={fieldError('reason')} w={260} />
        <Button type="submit" loading={adjust.isPending} disabled={amount === '' || !reason.trim()}>
          {t('executors.adjust')}
        </Button>
      </Group>
      <ErrorAlert error={adjust.error} onFields={['amount', 'reason']} />
    </form>
  );
}

/** The payers' traffic classes the executor's requisites take, changed on their own (PATCH …/executors/{id}). */
function ExecutorClasses({ id, classes }: { id: string; classes: string[] | null | undefined }) {
  const { t } = useI18n();
  const update = useUpdateExecutor();
  const [checked, setChecked] = useState<string[]>(() => checkedClasses(classes));
  const changed = JSON.stringify(classesInput(checked)) !== JSON.stringify(classes ?? null);
  return (
    <form
      aria-label={t('risk.trafficClasses')}
      onSubmit={(event) => {
        event.preventDefault();
        update.mutate({ id, traffic_classes: classesInput(checked) });
      }}
    >
      <Group align="flex-end" mt="sm">
        <TrafficClassesInput value={checked} onChange={setChecked} />
        <Button type="submit" size="xs" loading={update.isPending} disabled={!changed}>
          {t('common.save')}
        </Button>
      </Group>
      <ErrorAlert error={update.error} />
    </form>
  );
}

/** One executor: deposit, requisites (add one, change one, switch each on or off), its phones, the deposit's statement from the ledger. */
export function ExecutorDetail() {
  const { t } = useI18n();
  const names = useNames();
  const { id } = useParams({ strict: false }) as { id: string };
  const executor = useExecutor(id);
  const switchRequisite = useSwitchRequisite();
  const e = executor.data;
  // The requisite form open: a new one (null) or one to change.
  const [editing, setEditing] = useState<RequisiteView | null | undefined>(undefined);
  return (
    <Stack>
      <ErrorAlert error={executor.error ?? switchRequisite.error} />
      {e && (
        <Card withBorder>
          <Title order={3}>{e.name}</Title>
          <Group mt="xs">
            <Text>
              {t('executors.available')}: <Money value={e.balance} currency="USDT" />
            </Text>
            <Text>
              {t('executors.frozen')}: <Money value={e.balance_frozen} currency="USDT" />
            </Text>
          </Group>
          <Adjust id={e.id} />
          <ExecutorClasses key={JSON.stringify(e.traffic_classes ?? null)} id={e.id} classes={e.traffic_classes} />
        </Card>
      )}
      <Card withBorder>
        <Group justify="space-between" mb="sm">
          <Title order={4}>{t('executors.requisites')}</Title>
          <Button size="xs" onClick={() => setEditing(null)} disabled={!e}>
            {t('requisites.add')}
          </Button>
        </Group>
        {editing !== undefined && (
          <RequisiteForm key={editing?.id ?? 'new'} executorId={id} requisite={editing ?? undefined} onClose={() => setEditing(undefined)} />
        )}
        <DataTable
          rows={e?.requisites ?? []}
          loaded={e !== undefined}
          rowKey={(r) => r.id}
          rowLabel={(r) => `requisite row ${r.value}`}
          minWidth={600}
          striped={false}
          columns={[
            {
              header: '',
              cell: (r) => (
                <>
                  <Text size="sm" ff="monospace">
                    {names.card(r.value)}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {names.requisiteType(r.type)} · {names.bank(r.bank)} · {r.holder ? `${r.holder} · ` : ''}
                    {r.methods.map(names.method).join(', ')} · {r.currency}
                    {r.disabled_reason ? ` · ${r.disabled_reason}` : ''}
                  </Text>
                </>
              ),
            },
            {
              header: '',
              cell: (r) => (
                <Button size="xs" variant="light" onClick={() => setEditing(r)} aria-label={`${t('requisites.edit')} ${r.value}`}>
                  {t('requisites.edit')}
                </Button>
              ),
            },
            {
              header: '',
              cell: (r) => (
                <Switch
                  checked={r.is_active}
                  onChange={(event) => switchRequisite.mutate({ id: r.id, is_active: event.currentTarget.checked })}
                  aria-label={`requisite ${r.value}`}
                />
              ),
            },
          ]}
        />
      </Card>
      {e && <ExecutorPhones executor={e} />}
      <Card withBorder>
        <Statement path={`/admin/v1/executors/${id}/statement`} />
      </Card>
    </Stack>
  );
}
