import { Group, ScrollArea, SegmentedControl, Title } from '@mantine/core';
import type { Query } from '../api/client';
import { CsvLink } from './CsvLink';

/** A list screen's head: its title, the CSV of what is shown, and the status tabs when it has them. */
export function ListHeader({
  title,
  csv,
  status,
}: {
  title: string;
  csv?: { path: string; query: Query };
  status?: { value: string; options: { value: string; label: string }[]; onChange(value: string): void };
}) {
  return (
    <Group justify="space-between">
      <Group>
        <Title order={2}>{title}</Title>
        {csv && <CsvLink path={csv.path} query={csv.query} />}
      </Group>
      {status && (
        // On a phone the tabs scroll sideways instead of widening the page.
        <ScrollArea type="never" maw="100%">
          <SegmentedControl value={status.value} onChange={status.onChange} data={status.options} />
        </ScrollArea>
      )}
    </Group>
  );
}
