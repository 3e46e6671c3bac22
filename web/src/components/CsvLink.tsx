import { Anchor } from '@mantine/core';
import { type Query, withQuery } from '../api/client';
import { useI18n } from '../i18n';

/** "Export CSV": the list's own API route with the same filters and `format=csv`, up to 1000 rows from the current page on. */
export function CsvLink({ path, query }: { path: string; query: Query }) {
  const { t } = useI18n();
  return (
    <Anchor href={withQuery(path, { ...query, limit: 1000, format: 'csv' })} download size="sm">
      {t('common.exportCsv')}
    </Anchor>
  );
}
