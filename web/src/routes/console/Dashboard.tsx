import { Title } from '@mantine/core';
import { useI18n } from '../../i18n';

export function Dashboard() {
  const { t } = useI18n();
  return <Title order={2}>{t('dashboard.title')}</Title>;
}
