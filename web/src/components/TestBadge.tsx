import { Badge, Tooltip } from '@mantine/core';
import { useI18n } from '../i18n';

/** Marks a test object (a test terminal, its payments and payouts) wherever it is shown: test money is never mistaken for real. */
export function TestBadge({ show = true }: { show?: boolean | undefined }) {
  const { t } = useI18n();
  if (!show) return null;
  return (
    <Tooltip label={t('test.badgeHint')}>
      <Badge color="orange" variant="filled" size="sm" aria-label={t('test.badgeHint')}>
        {t('test.badge')}
      </Badge>
    </Tooltip>
  );
}
