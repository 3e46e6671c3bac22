import { Alert, Anchor, Badge, Button, Card, FileInput, Group, Image, NumberInput, Stack, Text, Textarea, Title } from '@mantine/core';
import { useState } from 'react';
import { type MyDispute, useAcceptDispute, useContestDispute, useMyDisputes } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { useSecondsLeft } from '../../components/useSecondsLeft';
import { When } from '../../components/When';
import { type MessageKey, useI18n } from '../../i18n';

const STATUS_COLOR: Record<MyDispute['status'], string> = {
  awaiting_executor: 'orange',
  contested: 'grape',
  escalated: 'red',
  approved: 'green',
  rejected: 'gray',
  cancelled: 'gray',
};

/** Hours, minutes and seconds left to answer, ticking; red in the last ten minutes, "overdue" after. */
function Countdown({ until }: { until: string }) {
  const { t } = useI18n();
  const left = useSecondsLeft(until);
  if (left === 0) return <Badge color="red">{t('cabinet.disputeOverdue')}</Badge>;
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  return (
    <Badge color={left < 600 ? 'red' : 'blue'} variant="light" size="lg" aria-label={t('cabinet.disputeLeft')}>
      {h > 0 ? `${h}:` : ''}
      {String(m).padStart(h > 0 ? 2 : 1, '0')}:{String(s).padStart(2, '0')}
    </Badge>
  );
}

/** The merchant's receipt, inline: a stored image as an image, a PDF or a link as a link. */
function Receipt({ dispute }: { dispute: MyDispute }) {
  const { t } = useI18n();
  const receipt = dispute.receipt;
  if (!receipt)
    return (
      <Text size="sm" c="dimmed">
        {t('disputes.noReceipt')}
      </Text>
    );
  if (receipt.content_type === null) {
    return (
      <Anchor href={receipt.url} target="_blank" rel="noreferrer noopener" size="sm" style={{ overflowWrap: 'anywhere' }}>
        {t('disputes.receipt')}: {receipt.url}
      </Anchor>
    );
  }
  // The stored file, from this origin (the API names it under PUBLIC_BASE_URL).
  const path = `/executor/v1/disputes/${dispute.id}/receipt`;
  return receipt.content_type.startsWith('image/') ? (
    <Image src={path} alt={t('disputes.receipt')} mah={360} fit="contain" radius="sm" />
  ) : (
    <Anchor href={path} target="_blank" rel="noreferrer">
      {t('disputes.receipt')} ({receipt.content_type})
    </Anchor>
  );
}

/** One open dispute: what is claimed, the receipt, then "the money came" (with the amount) or "it did not" (with a photo). */
function OpenDispute({ dispute }: { dispute: MyDispute }) {
  const { t } = useI18n();
  const accept = useAcceptDispute();
  const contest = useContestDispute();
  const [amount, setAmount] = useState<number | string>(dispute.amount);
  const [contesting, setContesting] = useState(false);
  const [comment, setComment] = useState('');
  const [photo, setPhoto] = useState<File | null>(null);
  const received = Number(amount);
  const validAmount = amount !== '' && Number.isFinite(received) && received > 0;
  const canAccept = dispute.status === 'awaiting_executor' || dispute.status === 'escalated';
  return (
    <Card withBorder padding="sm" aria-label={`dispute ${dispute.id}`}>
      <Group justify="space-between" mb="xs" wrap="nowrap">
        <Title order={3}>
          <Money value={dispute.amount} currency={dispute.currency} />
        </Title>
        {dispute.status === 'awaiting_executor' && dispute.answer_due_at ? (
          <Countdown until={dispute.answer_due_at} />
        ) : (
          <Badge color={STATUS_COLOR[dispute.status]}>{t(`cabinet.dispute.${dispute.status}` as MessageKey)}</Badge>
        )}
      </Group>
      <Stack gap="xs">
        <Text size="sm">
          {t('cabinet.disputeOn')} {dispute.requisite.bank ?? ''} •• {dispute.requisite.value.replace(/\D/g, '').slice(-4)} ·{' '}
          <Money value={dispute.payer_amount} currency={dispute.payer_currency} /> · <When at={dispute.opened_at} />
        </Text>
        {dispute.comment && (
          <Text size="sm" c="dimmed">
            «{dispute.comment}»
          </Text>
        )}
        {dispute.uncovered && <Alert color="orange">{t('cabinet.disputeUncovered')}</Alert>}
        <Receipt dispute={dispute} />
        {dispute.late_money.map((n) => (
          <Alert key={n.notification_id} color="blue" title={t('cabinet.lateMoney')}>
            <Text size="sm">
              <Money value={n.amount} currency={dispute.payer_currency} /> · <When at={n.received_at ?? n.created_at} />
            </Text>
            {n.text && <Text size="xs">{n.text}</Text>}
            <Button
              mt="xs"
              fullWidth
              color="green"
              disabled={!canAccept}
              loading={accept.isPending}
              onClick={() => accept.mutate({ id: dispute.id, notificationId: n.notification_id })}
            >
              {t('cabinet.thisIsIt')}
            </Button>
          </Alert>
        ))}
        {dispute.status === 'contested' && <Text size="sm">{t('cabinet.disputeWithSupport')}</Text>}
        {canAccept && !contesting && (
          <>
            <NumberInput label={t('cabinet.disputeReceived')} value={amount} onChange={setAmount} min={0} decimalScale={2} inputMode="decimal" />
            <Button
              fullWidth
              color="green"
              disabled={!validAmount}
              loading={accept.isPending}
              onClick={() => accept.mutate({ id: dispute.id, amount: received })}
            >
              {t('cabinet.disputeAccept')}
            </Button>
            <Button fullWidth variant="light" color="red" onClick={() => setContesting(true)}>
              {t('cabinet.disputeContest')}
            </Button>
          </>
        )}
        {canAccept && contesting && (
          <>
            <Textarea
              label={t('cabinet.disputeWhy')}
              value={comment}
              onChange={(e) => setComment(e.currentTarget.value)}
              autosize
              minRows={2}
              maxLength={2000}
            />
            {/* The phone's camera opens straight away; the server judges the photo by its content. */}
            <FileInput
              label={t('cabinet.disputePhoto')}
              description={t('cabinet.disputePhotoHint')}
              placeholder={t('cabinet.proofPick')}
              accept="image/*"
              capture="environment"
              value={photo}
              onChange={setPhoto}
              clearable
            />
            <Group grow>
              <Button variant="default" onClick={() => setContesting(false)}>
                {t('common.cancel')}
              </Button>
              <Button
                color="red"
                disabled={!comment.trim() && !photo}
                loading={contest.isPending}
                onClick={() => contest.mutate({ id: dispute.id, comment: comment.trim(), file: photo })}
              >
                {t('cabinet.disputeSend')}
              </Button>
            </Group>
          </>
        )}
        <ErrorAlert error={accept.error ?? contest.error} />
      </Stack>
    </Card>
  );
}

/** A closed dispute: how it ended, in one line. */
function ClosedDispute({ dispute }: { dispute: MyDispute }) {
  const { t } = useI18n();
  return (
    <Card withBorder padding="xs" aria-label={`dispute ${dispute.id}`}>
      <Group justify="space-between" wrap="nowrap">
        <Text size="sm">
          <Money value={dispute.decided_amount ?? dispute.amount} currency={dispute.currency} /> · <When at={dispute.decided_at ?? dispute.opened_at} />
        </Text>
        <Badge color={STATUS_COLOR[dispute.status]}>{t(`cabinet.dispute.${dispute.status}` as MessageKey)}</Badge>
      </Group>
    </Card>
  );
}

/** Disputes on the executor's payments: the open ones first, nearest deadline first, then the closed ones. */
export function CabinetDisputes() {
  const { t } = useI18n();
  const disputes = useMyDisputes();
  const rows = disputes.data?.disputes ?? [];
  const open = rows.filter((d) => d.status === 'awaiting_executor' || d.status === 'contested' || d.status === 'escalated');
  const closed = rows.filter((d) => !open.includes(d));
  return (
    <Stack>
      <ErrorAlert error={disputes.error} />
      <Title order={4}>{t('cabinet.disputesOpen')}</Title>
      <Text size="xs" c="dimmed">
        {t('cabinet.disputesHint')}
      </Text>
      {disputes.isSuccess && open.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      {open.map((d) => (
        <OpenDispute key={d.id} dispute={d} />
      ))}
      {closed.length > 0 && <Title order={4}>{t('cabinet.disputesClosed')}</Title>}
      {closed.map((d) => (
        <ClosedDispute key={d.id} dispute={d} />
      ))}
    </Stack>
  );
}
