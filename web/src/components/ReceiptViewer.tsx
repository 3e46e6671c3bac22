import { Anchor, Image, Stack, Text } from '@mantine/core';
import { isExternalReceipt, type Receipt, receiptPath } from '../api/disputes';
import { useI18n } from '../i18n';

/** A receipt shown inline: an image as an image, a PDF in the browser's viewer; a link to open it whole. */
export function ReceiptViewer({ receipt }: { receipt: Receipt | null }) {
  const { t } = useI18n();
  if (!receipt) return <Text c="dimmed">{t('disputes.noReceipt')}</Text>;
  const path = receiptPath(receipt);
  // A receipt the merchant gave as a link lives on another origin, which the console's CSP keeps out: a link only.
  if (isExternalReceipt(receipt)) {
    return (
      <Anchor href={path} target="_blank" rel="noreferrer noopener">
        {path}
      </Anchor>
    );
  }
  const isPdf = receipt.content_type === 'application/pdf';
  return (
    <Stack gap={4}>
      {isPdf ? (
        <object data={path} type="application/pdf" width="100%" height="420" aria-label={t('disputes.receipt')}>
          <Anchor href={path}>{t('common.open')}</Anchor>
        </object>
      ) : (
        <Image src={path} alt={t('disputes.receipt')} mah={420} fit="contain" radius="sm" />
      )}
      <Anchor href={path} target="_blank" rel="noreferrer" size="xs">
        {t('common.open')} ({receipt.content_type ?? '?'})
      </Anchor>
    </Stack>
  );
}
