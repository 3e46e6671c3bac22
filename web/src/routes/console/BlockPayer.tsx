import { Button, Card, Group, Modal, Select, Stack, Text, Textarea, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { BLOCK_KINDS, type BlockKind, type RiskHitView, useAddBlock, useRiskHits } from '../../api/risk';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert, useFieldError } from '../../components/ErrorAlert';
import { useI18n } from '../../i18n';
import { SettleDialog, useHitColumns } from './Risk';
import { useRiskNames } from './riskNames';

/**
 * "Block the payer" in one step from a payment's card or a dispute: the person chooses which of
 * the payer's marks to block (its client_id when the merchant sent one; the card, phone, IP or
 * device the payment saw) and says why; the server takes the value from the payment itself
 * (`payment_id` / `dispute_id` instead of `value`), so a card or a phone never passes through the
 * browser. The block holds for the payment's merchant.
 */
export function BlockPayer({
  paymentId,
  disputeId,
  merchantId,
  clientId,
}: {
  paymentId?: string;
  disputeId?: string;
  merchantId: string;
  clientId?: string | null;
}) {
  const { t } = useI18n();
  const names = useRiskNames();
  const add = useAddBlock();
  const fieldError = useFieldError(add.error);
  // A payment known to have no client_id (null) offers none; unknown (a dispute's card) leaves it to the server.
  const kinds = BLOCK_KINDS.filter((kind) => kind !== 'client_id' || clientId !== null);
  const [opened, setOpened] = useState(false);
  const [kind, setKind] = useState<BlockKind>(kinds[0]!);
  const [reason, setReason] = useState('');
  useEffect(() => {
    if (!opened) return;
    add.reset();
    setReason('');
  }, [opened, add.reset]);
  return (
    <>
      <Button color="red" variant="light" w="fit-content" onClick={() => setOpened(true)} disabled={add.isSuccess}>
        {add.isSuccess ? t('risk.blocked') : t('risk.blockPayer')}
      </Button>
      <Modal opened={opened} onClose={() => setOpened(false)} title={t('risk.blockPayer')} centered>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            add.mutate(
              { kind, ...(disputeId ? { dispute_id: disputeId } : { payment_id: paymentId }), merchant_id: merchantId, reason: reason.trim() },
              { onSuccess: () => setOpened(false) },
            );
          }}
        >
          <Stack>
            <Text size="sm">{t('risk.blockPayerWhat')}</Text>
            <Select
              label={t('risk.blockWhat')}
              data={kinds.map((k) => ({ value: k, label: k === 'client_id' && clientId ? `${names.kind(k)}: ${clientId}` : names.kind(k) }))}
              value={kind}
              onChange={(v) => v && setKind(v as BlockKind)}
              allowDeselect={false}
              error={fieldError(['kind', 'value'])}
            />
            <Textarea
              label={t('action.reason')}
              value={reason}
              onChange={(e) => setReason(e.currentTarget.value)}
              required
              autosize
              minRows={2}
              maxLength={1000}
              error={fieldError('reason')}
              data-autofocus
            />
            <ErrorAlert error={add.error} onFields={['kind', 'value', 'reason']} />
            <Group justify="flex-end">
              <Button variant="default" onClick={() => setOpened(false)}>
                {t('action.back')}
              </Button>
              <Button type="submit" color="red" loading={add.isPending} disabled={add.isPending || reason.trim() === ''}>
                {t('risk.block')}
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

/**
 * The risk rules' decisions on one payment and, on a dispute's card, on the dispute too (a flag on
 * a dispute may name only the dispute), newest first, with "settle" on the flags still waiting;
 * nothing when there are none.
 */
export function RiskHitsCard({ paymentId, disputeId }: { paymentId: string; disputeId?: string }) {
  const { t } = useI18n();
  const ofPayment = useRiskHits({ payment_id: paymentId, limit: 100, offset: 0 });
  const ofDispute = useRiskHits({ dispute_id: disputeId, limit: 100, offset: 0 }, disputeId !== undefined);
  const [settling, setSettling] = useState<RiskHitView | null>(null);
  // Merchant and object are the card's own: left out.
  const columns = useHitColumns(setSettling).filter((_, i) => i !== 4 && i !== 5);
  const byId = new Map<string, RiskHitView>();
  for (const hit of [...(ofPayment.data?.hits ?? []), ...(disputeId ? (ofDispute.data?.hits ?? []) : [])]) byId.set(hit.id, hit);
  const rows = [...byId.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const error = ofPayment.error ?? ofDispute.error;
  if (rows.length === 0 && !error) return null;
  return (
    <Card withBorder aria-label={t('risk.flags')}>
      <Title order={4} mb="sm">
        {t('risk.flags')}
      </Title>
      <ErrorAlert error={error} />
      <DataTable rows={rows} rowKey={(row) => row.id} minWidth={500} columns={columns} />
      <SettleDialog hit={settling} onClose={() => setSettling(null)} />
    </Card>
  );
}
