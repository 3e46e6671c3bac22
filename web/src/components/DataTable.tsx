import { Card, Stack, Table, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { useI18n } from '../i18n';
import { usePhone } from './usePhone';

export interface Column<Row> {
  /** The column's head; on a phone, the field's label in the row's card (none: the value takes the card's width). */
  header: ReactNode;
  cell(row: Row): ReactNode;
  /** On a phone the value goes under its label across the card (actions, forms, long text). */
  wide?: boolean;
}

/**
 * A list's table: one column definition per field, striped; a row may carry an accessible name
 * (tests and screen readers find it by that). On a phone (< 48em) each row is a card instead —
 * every field with its label, the wide ones (actions) across the card — so nothing scrolls sideways.
 */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  rowLabel,
  minWidth = 800,
  loaded = true,
  striped = true,
  fz,
  rowProps,
}: {
  rows: Row[];
  columns: Column<Row>[];
  rowKey(row: Row): string;
  rowLabel?(row: Row): string;
  minWidth?: number;
  loaded?: boolean;
  striped?: boolean;
  /** The table's font size on a desk (a dense table: `xs`). */
  fz?: 'xs' | 'sm';
  /** Extra attributes of a row (its highlight when selected). */
  rowProps?(row: Row): { bg?: string };
}) {
  const { t } = useI18n();
  const phone = usePhone();
  const empty = loaded && rows.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>;
  const withHeads = columns.some((column) => column.header);
  if (phone) {
    return (
      <>
        <Stack gap="xs" data-cards="">
          {rows.map((row) => (
            <Card key={rowKey(row)} withBorder padding="sm" aria-label={rowLabel?.(row)} data-card="" {...rowProps?.(row)}>
              <Stack gap={6}>
                {columns.map((column, index) => {
                  const value = column.cell(row);
                  if (value === null || value === undefined || value === false || value === '') return null;
                  if (!column.header || column.wide)
                    return (
                      // Columns are fixed for the screen: their place is their identity.
                      // biome-ignore lint/suspicious/noArrayIndexKey: see above
                      <div key={index} className="kassir-card-wide">
                        {column.header && (
                          <Text size="xs" c="dimmed">
                            {column.header}
                          </Text>
                        )}
                        {value}
                      </div>
                    );
                  return (
                    // biome-ignore lint/suspicious/noArrayIndexKey: see above
                    <div key={index} className="kassir-card-field">
                      <Text size="xs" c="dimmed">
                        {column.header}
                      </Text>
                      <div className="kassir-card-value">{value}</div>
                    </div>
                  );
                })}
              </Stack>
            </Card>
          ))}
        </Stack>
        {empty}
      </>
    );
  }
  return (
    <>
      <Table.ScrollContainer minWidth={minWidth}>
        <Table striped={striped} highlightOnHover fz={fz}>
          {withHeads && (
            <Table.Thead>
              <Table.Tr>
                {columns.map((column, index) => (
                  // Columns are fixed for the screen: their place is their identity.
                  // biome-ignore lint/suspicious/noArrayIndexKey: see above
                  <Table.Th key={index}>{column.header}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
          )}
          <Table.Tbody>
            {rows.map((row) => (
              <Table.Tr key={rowKey(row)} aria-label={rowLabel?.(row)} {...rowProps?.(row)}>
                {columns.map((column, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: see above
                  <Table.Td key={index}>{column.cell(row)}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {empty}
    </>
  );
}
