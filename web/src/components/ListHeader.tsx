import { Badge, Button, Collapse, Group, ScrollArea, SegmentedControl, Select, Stack, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';
import type { Query } from '../api/client';
import { useI18n } from '../i18n';
import { CsvLink } from './CsvLink';
import { usePhone } from './usePhone';
import { useUrlFilters } from './useUrlFilters';

/** URL parameters that place the view rather than narrow it. */
const NOT_FILTERS = new Set(['offset', 'selected']);

/**
 * A list screen's head: its title, the CSV of what is shown (`csv`, or `csvLink` when the list
 * makes its own link), the status tabs when it has them, and its filter fields. On a phone the
 * tabs (as a status list) and the fields fold behind a "Filters" button that counts the filters
 * set — the ones in the URL, and the status when it is not the screen's first.
 */
export function ListHeader({
  title,
  csv,
  csvLink,
  status,
  children,
}: {
  title: string;
  csv?: { path: string; query: Query };
  csvLink?: ReactNode;
  status?: { value: string; initial?: string; options: { value: string; label: string }[]; onChange(value: string): void };
  /** The list's filter fields. */
  children?: ReactNode;
}) {
  const { t } = useI18n();
  const phone = usePhone();
  const [opened, { toggle }] = useDisclosure(false);
  const [filters] = useUrlFilters();
  const active =
    Object.keys(filters).filter((key) => !NOT_FILTERS.has(key) && !(status && key === 'status')).length +
    (status && status.value !== (status.initial ?? status.options[0]?.value) ? 1 : 0);
  const head = (
    <Group>
      <Title order={2}>{title}</Title>
      {csv && <CsvLink path={csv.path} query={csv.query} />}
      {csvLink}
    </Group>
  );
  if (phone) {
    if (!status && !children) return head;
    return (
      <Stack gap="xs">
        <Group justify="space-between">
          {head}
          <Button
            variant={active > 0 ? 'light' : 'default'}
            size="xs"
            onClick={toggle}
            aria-expanded={opened}
            rightSection={
              active > 0 ? (
                <Badge size="xs" circle aria-label={t('common.filtersActive', { n: active })}>
                  {active}
                </Badge>
              ) : undefined
            }
          >
            {t('common.filters')}
          </Button>
        </Group>
        <Collapse expanded={opened}>
          <Stack gap="xs" className="kassir-filters-folded" aria-label={t('common.filters')} role="group">
            {status && (
              <Select
                label={t('common.status')}
                data={status.options}
                value={status.value}
                onChange={(value) => value && status.onChange(value)}
                allowDeselect={false}
              />
            )}
            {children}
          </Stack>
        </Collapse>
      </Stack>
    );
  }
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        {head}
        {status && (
          <ScrollArea type="never" maw="100%">
            <SegmentedControl value={status.value} onChange={status.onChange} data={status.options} />
          </ScrollArea>
        )}
      </Group>
      {children && <Group align="flex-end">{children}</Group>}
    </Stack>
  );
}
