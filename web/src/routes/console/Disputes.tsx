import {
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  Grid,
  Group,
  Image,
  NumberInput,
  ScrollArea,
  SegmentedControl,
  Stack,
  Switch,
  Text,
  Title,
  UnstyledButton,
} from '@mantine/core';
import { useEffect, useState } from 'react';
import { type DisputeCard, useDecideDispute, useDisputes } from '../../api/disputes';
import { ConfirmAction } from '../../components/ConfirmAction';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Money } from '../../components/Money';
import { Pager } from '../../components/Pager';
import { ReceiptViewer } from '../../components/ReceiptViewer';
import { type RiskFlag, RiskFlagBadges } from '../../components/RiskFlagBadge';
import { StatusBadge } from '../../components/StatusBadge';
import { TestBadge } from '../../components/TestBadge';
import { useNames } from '../../components/useNames';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';
import { BlockPayer, RiskHitsCard } from './BlockPayer';

const LIMIT = 50;

/**
 * Approve with the amount received, or reject: both irreversible, so each (by its button or by A
 * and R) opens a confirmation that names the payment, the amount and the status it leads to, and
 * a rejection asks the reason.
 */
function Decision({ dispute, onDecided }: { dispute: DisputeCard; onDecided(): void }) {
  const { t } = useI18n();
  const decide = useDecideDispute();
  const [amount, setAmount] = useState<number | string>(dispute.amount ?? dispute.payment.amount);
  // The confirmation open, and for which dispute: another dispute selected meanwhile has none open.
  const [asked, setAsked] = useState<{ what: 'approve' | 'reject'; id: string } | null>(null);
  const asking = asked?.id === dispute.id ? asked.what : null;
  useEffect(() => setAmount(dispute.amount ?? dispute.payment.amount), [dispute]);
  const ask = (what: 'approve' | 'reject') => {
    decide.reset();
    setAsked({ what, id: dispute.id });
  };
  const close = () => setAsked(null);
  const decided = () => {
    close();
    onDecided();
  };
  const p = dispute.payment;
  const received = Number(amount);
  const validAmount = amount !== '' && Number.isFinite(received) && received > 0;
  // DESIGN.md decision 7: the order amount received → COMPLETED; another amount → COMPLETED_APPEAL.
  const outcome = received === p.amount ? 'COMPLETED' : 'COMPLETED_APPEAL';

  // Keyboard: A and R open the same confirmations as the buttons (not while typing in a field or with a dialog open).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.target as HTMLElement).closest('input, textarea') || event.ctrlKey || event.metaKey || event.altKey) return;
      if (dispute.status !== 'open' || decide.isPending || asking !== null) return;
      if (event.key === 'a' && validAmount) ask('approve');
      if (event.key === 'r') ask('reject');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  if (dispute.status !== 'open') {
    return (
      <Stack gap={4}>
        <Text size="sm">
          <StatusBadge status={dispute.status} /> {dispute.decided_by} · <When at={dispute.decided_at} />{' '}
          {dispute.decided_amount !== null && <Money value={dispute.decided_amount} currency={p.currency} />}
        </Text>
        {dispute.decision_reason && (
          <Text size="sm">
            {t('action.reason')}: {dispute.decision_reason}
          </Text>
        )}
      </Stack>
    );
  }
  const payment = (
    <>
      <Code>{p.ext_id}</Code> · <Money value={p.amount} currency={p.currency} />
      <Text size="xs" c="dimmed">
        {p.id}
      </Text>
    </>
  );
  return (
    <Stack gap="xs">
      <Group align="flex-end">
        <NumberInput label={t('disputes.approveAmount')} value={amount} onChange={setAmount} min={0} decimalScale={2} w={180} />
        <Button color="green" onClick={() => ask('approve')} disabled={!validAmount} loading={decide.isPending && asking === 'approve'}>
          {t('disputes.approve')} (A)
        </Button>
        <Button color="red" variant="light" onClick={() => ask('reject')} loading={decide.isPending && asking === 'reject'}>
          {t('disputes.reject')} (R)
        </Button>
      </Group>
      <ConfirmAction
        opened={asking === 'approve'}
        title={t('disputes.approveTitle')}
        action={t('disputes.approve')}
        color="green"
        busy={decide.isPending}
        error={decide.error}
        onClose={close}
        onConfirm={() => decide.mutate({ paymentId: p.id, approve: true, amount: received }, { onSuccess: decided })}
      >
        {payment}
        <Text size="sm" mt="xs">
          {t('disputes.approveReceived')}: <Money value={received} currency={p.currency} />
        </Text>
        <Text size="sm">
          {t('disputes.approveBecomes')}: <StatusBadge status={outcome} />
        </Text>
        <Text size="sm" mt="xs">
          {t(outcome === 'COMPLETED' ? 'disputes.approveWhat' : 'disputes.approveAppealWhat')}
        </Text>
      </ConfirmAction>
      <ConfirmAction
        opened={asking === 'reject'}
        title={t('disputes.rejectTitle')}
        action={t('disputes.reject')}
        askReason
        busy={decide.isPending}
        error={decide.error}
        onClose={close}
        onConfirm={(reason) => decide.mutate({ paymentId: p.id, approve: false, reason: reason! }, { onSuccess: decided })}
      >
        {payment}
        <Text size="sm" mt="xs">
          {t('disputes.rejectBecomes')}: <StatusBadge status="CANCELLED" />
        </Text>
        <Text size="sm" mt="xs">
          {t('disputes.rejectWhat')}
        </Text>
      </ConfirmAction>
    </Stack>
  );
}

/** The executor's side (issue 35): its deadline, what it answered, and its bank history beside the merchant's receipt. */
function ExecutorAnswer({ dispute }: { dispute: DisputeCard }) {
  const { t } = useI18n();
  if (!dispute.stage && !dispute.executor_answer) return null;
  const answer = dispute.executor_answer;
  const deadline = dispute.support_due_at ?? dispute.answer_due_at;
  return (
    <Card withBorder padding="sm" aria-label={t('disputes.executorAnswer')}>
      <Group justify="space-between">
        <Text fw={500}>{t('disputes.executorAnswer')}</Text>
        {dispute.stage && <Badge color={STAGE_COLOR[dispute.stage]}>{t(STAGE_LABEL[dispute.stage])}</Badge>}
      </Group>
      {dispute.status === 'open' && deadline && (
        <Text size="sm" c={dispute.overdue ? 'red' : undefined}>
          {t('disputes.deadline')}: <When at={deadline} /> {dispute.overdue && `· ${t('disputes.overdue')}`}
        </Text>
      )}
      {dispute.hold !== null && (
        <Text size="sm">
          {t('disputes.frozen')}: <Money value={dispute.hold} currency="USDT" /> {dispute.uncovered && `· ${t('disputes.uncovered')}`}
        </Text>
      )}
      {dispute.timed_out && <Text size="sm">{t('disputes.timedOut', { what: dispute.timed_out })}</Text>}
      {!answer ? (
        <Text size="sm" c="dimmed">
          {t('disputes.executorNone')}
        </Text>
      ) : (
        <Stack gap={4}>
          <Text size="sm">
            {t(answer.kind === 'accepted' ? 'disputes.executorAccepted' : 'disputes.executorContested')} · <When at={answer.at} />
            {answer.late && ` · ${t('disputes.answeredLate')}`}
          </Text>
          {answer.comment && <Text size="sm">«{answer.comment}»</Text>}
          {answer.file && (
            <>
              <Text size="sm" fw={500}>
                {t('disputes.executorFile')}
              </Text>
              {answer.file.content_type?.startsWith('image/') ? (
                <Image src={`/admin/v1/disputes/${dispute.id}/executor-file`} alt={t('disputes.executorFile')} mah={360} fit="contain" radius="sm" />
              ) : (
                <Anchor href={`/admin/v1/disputes/${dispute.id}/executor-file`} target="_blank" rel="noreferrer">
                  {t('common.open')} ({answer.file.content_type ?? '?'})
                </Anchor>
              )}
            </>
          )}
        </Stack>
      )}
    </Card>
  );
}

const STAGE_COLOR = { awaiting_executor: 'orange', contested: 'grape', escalated: 'red' } as const;
const STAGE_LABEL = { awaiting_executor: 'disputes.awaiting', contested: 'disputes.contested', escalated: 'disputes.escalated' } as const;

/** What the evidence checks flagged, each with its figure (and who settled it): a flag decides nothing, it says where to look. */
function RiskFlags({ flags }: { flags: RiskFlag[] }) {
  const { t } = useI18n();
  if (flags.length === 0) return null;
  return (
    <Stack gap={4} aria-label={t('riskFlag.title')}>
      <RiskFlagBadges flags={flags} />
      {flags.map((flag) => (
        <Text key={flag.id} size="sm" c={flag.settled_at ? 'dimmed' : 'red'} style={{ overflowWrap: 'anywhere' }}>
          {flag.figure}
          {flag.settled_at && ` · ${t('riskFlag.settled', { who: flag.settled_by ?? '' })}`}
        </Text>
      ))}
    </Stack>
  );
}

function DisputeDetail({ dispute, onDecided }: { dispute: DisputeCard; onDecided(): void }) {
  const { t } = useI18n();
  const names = useNames();
  const p = dispute.payment;
  return (
    <Card withBorder>
      <Stack>
        <Group justify="space-between">
          <Title order={4}>
            <Money value={p.amount} currency={p.currency} /> · {names.method(p.method)}
          </Title>
          <StatusBadge status={p.status} />
        </Group>
        <Text size="xs" c="dimmed">
          {p.id} · ext_id {p.ext_id} · <When at={p.created_at} />
        </Text>
        <RiskFlags flags={dispute.risk_flags ?? []} />
        <Grid>
          <Grid.Col span={{ base: 12, lg: 6 }}>
            <Stack gap="xs">
              <Text fw={500}>{t('disputes.receipt')}</Text>
              <ReceiptViewer receipt={dispute.receipt ?? dispute.receipts[0] ?? null} />
            </Stack>
          </Grid.Col>
          <Grid.Col span={{ base: 12, lg: 6 }}>
            <Stack gap="xs">
              <Text>
                {t('disputes.claimed')}: <Money value={dispute.amount} currency={p.currency} /> · {t('disputes.order')}:{' '}
                <Money value={p.amount} currency={p.currency} />
              </Text>
              {dispute.comment && (
                <Text size="sm">
                  {t('disputes.comment')}: {dispute.comment}
                </Text>
              )}
              <Text fw={500}>{t('disputes.notifications')}</Text>
              {dispute.notifications.length === 0 ? (
                <Text c="dimmed" size="sm">
                  {t('common.empty')}
                </Text>
              ) : (
                dispute.notifications.map((n) => (
                  <Card key={n.id} withBorder padding="xs">
                    <Group justify="space-between">
                      <Money value={n.amount} currency={p.currency} />
                      <StatusBadge status={n.status} />
                    </Group>
                    <Text size="sm">{n.text}</Text>
                    <Text size="xs" c="dimmed">
                      <When at={n.received_at ?? n.created_at} />
                    </Text>
                  </Card>
                ))
              )}
              <Text fw={500}>{t('disputes.confirmations')}</Text>
              {dispute.confirmations.length === 0 ? (
                <Text c="dimmed" size="sm">
                  {t('common.empty')}
                </Text>
              ) : (
                dispute.confirmations.map((c) => (
                  <Text key={c.created_at + c.source} size="sm">
                    {c.source} · <When at={c.created_at} />
                  </Text>
                ))
              )}
            </Stack>
          </Grid.Col>
        </Grid>
        <RiskHitsCard paymentId={p.id} disputeId={dispute.id} />
        <ExecutorAnswer dispute={dispute} />
        <Decision dispute={dispute} onDecided={onDecided} />
        <BlockPayer disputeId={dispute.id} merchantId={p.merchant_id} />
      </Stack>
    </Card>
  );
}

/** The disputes queue: the list on the left, the selected card with its receipt and evidence on the right; J/K/A/R from the keyboard. */
export function Disputes() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const status = filters.status ?? 'open';
  const stage = status === 'open' ? filters.stage : undefined;
  const page = pageOf(filters, LIMIT);
  const flagged = filters.flagged === 'true' ? 'true' : undefined;
  const disputes = useDisputes({ status, stage, flagged, ...page });
  const rows = disputes.data?.disputes ?? [];
  const selected = rows.find((d) => d.id === filters.selected) ?? rows[0];
  const select = (id: string | undefined) => setFilters({ selected: id, offset: filters.offset });

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.target as HTMLElement).closest('input, textarea') || event.ctrlKey || event.metaKey || event.altKey) return;
      const index = rows.findIndex((d) => d.id === selected?.id);
      if (event.key === 'j' && index < rows.length - 1) select(rows[index + 1]?.id);
      if (event.key === 'k' && index > 0) select(rows[index - 1]?.id);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  return (
    <Stack>
      <ListHeader
        title={t('disputes.title')}
        csv={{ path: '/admin/v1/disputes', query: { status, offset: page.offset } }}
        status={{
          value: status,
          initial: 'open',
          onChange: (value) => setFilters({ status: value === 'open' ? undefined : value, selected: undefined }),
          options: [
            { value: 'open', label: t('disputes.open') },
            { value: 'approved', label: t('disputes.approved') },
            { value: 'rejected', label: t('disputes.rejected') },
            { value: 'all', label: t('common.all') },
          ],
        }}
      />
      {status === 'open' && (
        <SegmentedControl
          aria-label={t('disputes.stage')}
          value={stage ?? 'all'}
          onChange={(value) => setFilters({ stage: value === 'all' ? undefined : value, selected: undefined, offset: undefined })}
          data={[
            { value: 'all', label: t('common.all') },
            { value: 'awaiting_executor', label: t('disputes.awaiting') },
            { value: 'contested', label: t('disputes.contested') },
            { value: 'overdue', label: t('disputes.overdue') },
          ]}
        />
      )}
      <Switch
        label={t('disputes.flaggedOnly')}
        checked={flagged === 'true'}
        onChange={(event) => setFilters({ flagged: event.currentTarget.checked ? 'true' : undefined, selected: undefined, offset: undefined })}
      />
      <Text size="xs" c="dimmed">
        {t('disputes.keys')}
      </Text>
      <ErrorAlert error={disputes.error} />
      {disputes.isSuccess && rows.length === 0 && <Text c="dimmed">{t('disputes.none')}</Text>}
      {rows.length > 0 && (
        <Grid>
          <Grid.Col span={{ base: 12, md: 4 }}>
            <ScrollArea.Autosize mah="75vh">
              <DataTable
                rows={rows}
                rowKey={(d) => d.id}
                rowLabel={(d) => `dispute row ${d.payment.ext_id}`}
                minWidth={0}
                striped={false}
                rowProps={(d) => ({ bg: d.id === selected?.id ? 'var(--mantine-color-blue-light)' : undefined })}
                columns={[
                  {
                    header: '',
                    cell: (d) => (
                      <UnstyledButton onClick={() => select(d.id)} w="100%" aria-label={`dispute ${d.payment.ext_id}`}>
                        <Group justify="space-between" wrap="nowrap">
                          <Money value={d.payment.amount} currency={d.payment.currency} />
                          <Group gap={4} wrap="nowrap">
                            <TestBadge show={d.payment.is_test === true} />
                            {d.receipt && <Badge size="xs">{t('disputes.receipt')}</Badge>}
                          </Group>
                        </Group>
                        <Text size="xs" c="dimmed">
                          {d.payment.ext_id} · <When at={d.created_at} />
                        </Text>
                        <RiskFlagBadges flags={d.risk_flags} size="xs" />
                        {d.status === 'open' && d.stage && (
                          <Text size="xs" c={d.overdue ? 'red' : 'dimmed'}>
                            {t(STAGE_LABEL[d.stage])} · {t('disputes.deadline')} <When at={d.support_due_at ?? d.answer_due_at} />
                          </Text>
                        )}
                      </UnstyledButton>
                    ),
                  },
                ]}
              />
            </ScrollArea.Autosize>
            <Pager offset={page.offset} limit={LIMIT} count={rows.length} onChange={(offset) => setFilters({ offset: String(offset) })} />
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 8 }}>{selected && <DisputeDetail dispute={selected} onDecided={() => select(undefined)} />}</Grid.Col>
        </Grid>
      )}
    </Stack>
  );
}
