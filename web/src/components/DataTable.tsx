import { Table, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { useI18n } from '../i18n';

export interface Column<Row> {
  header: ReactNode;
  cell(row: Row): ReactNode;
}

/**
 * A server-paged list's table: one column definition per field, striped, scrolling sideways on a
 * narrow screen; a row may carry an accessible name (tests and screen readers find it by that).
 */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  rowLabel,
  minWidth = 800,
  loaded = true,
}: {
  rows: Row[];
  columns: Column<Row>[];
  rowKey(row: Row): string;
  rowLabel?(row: Row): string;
  minWidth?: number;
  loaded?: boolean;
}) {
  const { t } = useI18n();
  return (
    <>
      <Table.ScrollContainer minWidth={minWidth}>
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              {columns.map((column, index) => (
                // Columns are fixed for the screen: their place is their identity.
                // biome-ignore lint/suspicious/noArrayIndexKey: see above
                <Table.Th key={index}>{column.header}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => (
              <Table.Tr key={rowKey(row)} aria-label={rowLabel?.(row)}>
                {columns.map((column, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: see above
                  <Table.Td key={index}>{column.cell(row)}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {loaded && rows.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
    </>
  );
}
