import { Button, Card, FileInput, Group, NumberInput, Stack, Text, Textarea, Title } from '@mantine/core';
import { useState } from 'react';
import { type TestPaymentAction, useOpenDispute, useTestPaymentAction } from '../../api/merchant';
import type { PaymentView } from '../../api/payments';
import { ErrorAlert } from '../../components/ErrorAlert';
import { TestBadge } from '../../components/TestBadge';
import { type MessageKey, useI18n } from '../../i18n';

/** The test actions each status offers (the server checks them again: a live payment refuses them all). */
const ACTIONS: Record<string, { action: TestPaymentAction; label: MessageKey; color: string }[]> = {
  PENDING: [
    { action: 'complete', label: 'test.complete', color: 'green' },
    { action: 'expire', label: 'test.expire', color: 'gray' },
  ],
  DISPUTE: [
    { action: 'dispute/approve', label: 'test.approveDispute', color: 'green' },
    { action: 'dispute/reject', label: 'test.rejectDispute', color: 'red' },
  ],
};

/**
 * Test mode (Stripe's is the model): on a test payment the merchant plays the payer, the bank and
 * the operator — completes, expires or decides its dispute — to try its webhooks end to end.
 */
function TestPanel({ payment }: { payment: PaymentView }) {
  const { t } = useI18n();
  const act = useTestPaymentAction();
  const actions = ACTIONS[payment.status] ?? [];
  return (
    <Card withBorder aria-label={t('test.panel')}>
      <Group gap="xs">
        <Title order={4}>{t('test.panel')}</Title>
        <TestBadge />
      </Group>
      <Text size="sm" c="dimmed" mb="xs">
        {t('test.panelHint')}
      </Text>
      {actions.length === 0 && <Text size="sm">{t('test.nothingToDo')}</Text>}
      <Group>
        {actions.map((a) => (
          <Button
            key={a.action}
            color={a.color}
            variant="light"
            loading={act.isPending && act.variables?.action === a.action}
            disabled={act.isPending}
            onClick={() => act.mutate({ id: payment.id, action: a.action })}
          >
            {t(a.label)}
          </Button>
        ))}
      </Group>
      <ErrorAlert error={act.error} />
    </Card>
  );
}

/** Opens a dispute on a cancelled payment with the receipt, as POST /v1/payments/{id}/dispute does. */
function DisputeForm({ payment }: { payment: PaymentView }) {
  const { t } = useI18n();
  const open = useOpenDispute();
  const [amount, setAmount] = useState<string | number>('');
  const [comment, setComment] = useState('');
  const [receipt, setReceipt] = useState<File | null>(null);
  return (
    <Card withBorder>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          open.mutate({ id: payment.id, amount: Number(amount) || undefined, comment: comment.trim() || undefined, receipt });
        }}
      >
        <Stack gap="xs">
          <Title order={4}>{t('dispute.open')}</Title>
          <Text size="sm" c="dimmed">
            {t('dispute.openHint')}
          </Text>
          <NumberInput label={t('dispute.amount')} value={amount} onChange={setAmount} min={0} decimalScale={2} w={260} />
          <Textarea label={t('dispute.comment')} value={comment} onChange={(e) => setComment(e.currentTarget.value)} maxLength={2000} autosize minRows={2} />
          <FileInput
            label={t('dispute.receipt')}
            value={receipt}
            onChange={setReceipt}
            accept="image/png,image/jpeg,image/webp,image/heic,application/pdf"
            clearable
          />
          <Button type="submit" w="fit-content" loading={open.isPending}>
            {t('dispute.send')}
          </Button>
          <ErrorAlert error={open.error} />
          {open.isSuccess && <Text c="green">{t('dispute.opened')}</Text>}
        </Stack>
      </form>
    </Card>
  );
}

/** What the merchant can do with one of its payments in the cabinet: its test actions, a dispute once it is cancelled. */
export function MerchantPaymentActions({ payment }: { payment: PaymentView }) {
  return (
    <>
      {payment.is_test === true && <TestPanel payment={payment} />}
      {(payment.status === 'CANCELLED' || payment.status === 'CANCELLED_APPEAL') && <DisputeForm payment={payment} />}
    </>
  );
}
