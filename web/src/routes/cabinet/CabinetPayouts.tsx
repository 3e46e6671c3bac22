import { ActionIcon, Anchor, Badge, Button, Card, CopyButton, FileInput, Group, Stack, Tabs, Text, Textarea, Title, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { useState } from 'react';
import { type CabinetPayout, useMyPayouts, usePayoutAction } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { useNames } from '../../components/useNames';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

/** What the proof may be: the server checks the content, the picker only narrows the choice. */
const PROOF_TYPES = 'image/png,image/jpeg,image/webp,image/heic,application/pdf';

/** A value the executor types into the banking app: shown large, copied with one touch. */
/** A value to type into the banking app: shown as read (a card in fours), copied as the app wants it (`value`). */
function Copyable({ label, value, shown }: { label: string; value: string; shown?: string }) {
  const { t } = useI18n();
  return (
    <Group justify="space-between" wrap="nowrap" gap="xs">
      <div style={{ minWidth: 0 }}>
        <Text size="xs" c="dimmed">
          {label}
        </Text>
        <Text fw={600} ff="monospace" style={{ overflowWrap: 'anywhere' }}>
          {shown ?? value}
        </Text>
      </div>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? t('common.copied') : t('common.copy')}>
            <ActionIcon variant="light" size="lg" onClick={copy} aria-label={`${t('common.copy')} ${label}`}>
              {copied ? <IconCheck size={18} /> : <IconCopy size={18} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}

/** A payout the executor took: the recipient in full, then done (with the proof) or could not pay (with why). */
function TakenPayout({ payout }: { payout: CabinetPayout }) {
  const { t } = useI18n();
  const names = useNames();
  const action = usePayoutAction();
  const [proof, setProof] = useState<File | null>(null);
  const [failing, setFailing] = useState(false);
  const [reason, setReason] = useState('');
  return (
    <Card withBorder padding="sm" aria-label={`payout ${payout.id}`}>
      <Group justify="space-between" mb="xs">
        <Title order={3}>
          <Money value={payout.amount} currency={payout.currency} />
        </Title>
        <Badge variant="light">{payout.method === 'sbp' ? t('cabinet.bySbp') : t('cabinet.toCard')}</Badge>
      </Group>
      <Stack gap="xs">
        <Copyable
          label={payout.method === 'sbp' ? t('cabinet.phone') : t('cabinet.cardNumber')}
          value={payout.requisites}
          shown={names.card(payout.requisites)}
        />
        <Copyable label={t('cabinet.recipient')} value={payout.holder_name ?? ''} />
        {payout.bank && <Copyable label={t('cabinet.bank')} value={names.bank(payout.bank)} />}
        <Text size="xs" c="dimmed">
          {t('cabinet.taken')}: <When at={payout.taken_at ?? null} />
        </Text>
        {!failing && (
          <>
            <FileInput
              label={t('cabinet.proof')}
              description={t('cabinet.proofHint')}
              placeholder={t('cabinet.proofPick')}
              accept={PROOF_TYPES}
              value={proof}
              onChange={setProof}
              clearable
            />
            <Button fullWidth color="green" disabled={!proof} loading={action.isPending} onClick={() => proof && action.mutate({ id: payout.id, proof })}>
              {t('cabinet.paid')}
            </Button>
            <Button fullWidth variant="subtle" color="red" onClick={() => setFailing(true)}>
              {t('cabinet.cannotPay')}
            </Button>
          </>
        )}
        {failing && (
          <>
            <Textarea label={t('payouts.reason')} value={reason} onChange={(e) => setReason(e.currentTarget.value)} autosize minRows={2} maxLength={1000} />
            <Group grow>
              <Button variant="default" onClick={() => setFailing(false)}>
                {t('common.cancel')}
              </Button>
              <Button color="red" disabled={!reason.trim()} loading={action.isPending} onClick={() => action.mutate({ id: payout.id, reason: reason.trim() })}>
                {t('payouts.fail')}
              </Button>
            </Group>
          </>
        )}
        <ErrorAlert error={action.error} />
      </Stack>
    </Card>
  );
}

/** A payout no one has taken yet: enough to choose (amount, method, bank), the recipient masked until taken. */
function AvailablePayout({ payout }: { payout: CabinetPayout }) {
  const { t } = useI18n();
  const names = useNames();
  const action = usePayoutAction();
  return (
    <Card withBorder padding="sm" aria-label={`payout ${payout.id}`}>
      <Group justify="space-between" wrap="nowrap">
        <div>
          <Text fw={600}>
            <Money value={payout.amount} currency={payout.currency} />
          </Text>
          <Text size="xs" c="dimmed">
            {payout.method === 'sbp' ? t('cabinet.bySbp') : t('cabinet.toCard')} · {names.card(payout.requisites)}
            {payout.bank ? ` · ${names.bank(payout.bank)}` : ''} · <When at={payout.created_at} />
          </Text>
        </div>
        <Button loading={action.isPending} onClick={() => action.mutate({ id: payout.id, take: true })}>
          {t('cabinet.take')}
        </Button>
      </Group>
      <ErrorAlert error={action.error} />
    </Card>
  );
}

/** A payout the executor paid: the amount, whom (masked again), when, and the proof they sent. */
function PaidPayout({ payout }: { payout: CabinetPayout }) {
  const { t } = useI18n();
  return (
    <Card withBorder padding="sm" aria-label={`paid payout ${payout.id}`}>
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <div style={{ minWidth: 0 }}>
          <Text fw={600}>
            <Money value={payout.amount} currency={payout.currency} />
          </Text>
          <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
            {payout.method === 'sbp' ? t('cabinet.bySbp') : t('cabinet.toCard')} · {payout.requisites}
            {payout.holder_name ? ` · ${payout.holder_name}` : ''}
          </Text>
          <Text size="xs" c="dimmed">
            {t('cabinet.paidAt')}: <When at={payout.completed_at ?? null} />
          </Text>
        </div>
        {payout.has_proof ? (
          <Anchor href={`/executor/v1/payouts/${payout.id}/proof`} download size="sm" style={{ flexShrink: 0 }}>
            {t('cabinet.proofLink')}
          </Anchor>
        ) : (
          <Text size="xs" c="dimmed" style={{ flexShrink: 0 }}>
            {t('cabinet.noProof')}
          </Text>
        )}
      </Group>
    </Card>
  );
}

/** Payouts: the ones the executor is paying now first, then the ones it may take; the ones it paid on their own tab. */
export function CabinetPayouts() {
  const { t } = useI18n();
  const payouts = useMyPayouts();
  const taken = payouts.data?.taken ?? [];
  const available = payouts.data?.available ?? [];
  const paid = payouts.data?.paid ?? [];
  return (
    <Tabs defaultValue="open" keepMounted={false}>
      <Tabs.List grow mb="sm">
        <Tabs.Tab value="open">{t('cabinet.toPay')}</Tabs.Tab>
        <Tabs.Tab value="paid">{t('cabinet.paidTab')}</Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="open">
        <Stack>
          <ErrorAlert error={payouts.error} />
          {taken.length > 0 && <Title order={4}>{t('cabinet.payingNow')}</Title>}
          {taken.map((p) => (
            <TakenPayout key={p.id} payout={p} />
          ))}
          <Title order={4}>{t('cabinet.toTake')}</Title>
          {payouts.isSuccess && available.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
          {available.map((p) => (
            <AvailablePayout key={p.id} payout={p} />
          ))}
        </Stack>
      </Tabs.Panel>
      <Tabs.Panel value="paid">
        <Stack>
          <ErrorAlert error={payouts.error} />
          {payouts.isSuccess && paid.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
          {paid.map((p) => (
            <PaidPayout key={p.id} payout={p} />
          ))}
        </Stack>
      </Tabs.Panel>
    </Tabs>
  );
}
