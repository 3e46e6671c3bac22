import { Group, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { get } from '../api/client';
import { useI18n } from '../i18n';
import { CsvLink } from './CsvLink';
import { DataTable } from './DataTable';
import { Money } from './Money';
import { Pager } from './Pager';
import { type StatementLine, useStatementLine } from './statementLine';
import { When } from './When';

interface StatementEntry extends StatementLine {
  id: string;
  created_at: string;
  account: string;
  amount: number | string;
  balance_after: number | string;
}

const LIMIT = 50;

/** An account statement read from the ledger (an executor's deposit, a terminal's balance): postings newest first, named as a person says them, the balance after each. */
export function Statement({ path }: { path: string }) {
  const { t } = useI18n();
  const line = useStatementLine();
  const [offset, setOffset] = useState(0);
  const statement = useQuery({
    queryKey: ['statement', path, offset],
    queryFn: () => get<{ entries: StatementEntry[]; total: number }>(path, { limit: LIMIT, offset }),
  });
  const rows = statement.data?.entries ?? [];
  return (
    <>
      <Group mb="sm">
        <Title order={4}>{t('executors.statement')}</Title>
        <CsvLink path={path} query={{ offset }} />
      </Group>
      <DataTable
        rows={rows}
        loaded={statement.isSuccess}
        rowKey={(entry) => `${entry.id}-${entry.account}`}
        minWidth={700}
        columns={[
          { header: t('common.created'), cell: (entry) => <When at={entry.created_at} /> },
          { header: t('audit.action'), cell: (entry) => line.action(entry) },
          { header: t('statement.account'), cell: (entry) => t(entry.account === 'frozen' ? 'executors.frozen' : 'executors.available') },
          { header: t('common.amount'), cell: (entry) => <Money value={entry.amount} /> },
          { header: t('statement.after'), cell: (entry) => <Money value={entry.balance_after} /> },
          { header: t('statement.about'), cell: (entry) => <Text size="xs">{line.about(entry)}</Text> },
        ]}
      />
      <Pager offset={offset} limit={LIMIT} count={rows.length} total={statement.data?.total} onChange={setOffset} />
    </>
  );
}
