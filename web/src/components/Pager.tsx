import { Button, Group, Text } from '@mantine/core';
import { useI18n } from '../i18n';

/** Server-side paging: offset and limit live in the URL; `count` is how many rows this page has; "page 1 of N" when the total is known. */
export function Pager({
  offset,
  limit,
  count,
  total,
  onChange,
}: {
  offset: number;
  limit: number;
  count: number;
  total?: number;
  onChange(offset: number): void;
}) {
  const { t, f } = useI18n();
  const page = Math.floor(offset / limit) + 1;
  const hasNext = total !== undefined ? offset + count < total : count === limit;
  return (
    <Group justify="space-between" mt="sm">
      <Text size="sm" c="dimmed">
        {total !== undefined
          ? t('common.pageOf', { n: page, pages: Math.max(1, Math.ceil(total / limit)), total: f.number(total) })
          : t('common.page', { n: page })}
      </Text>
      <Group gap="xs">
        <Button variant="default" size="xs" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
          {t('common.previous')}
        </Button>
        <Button variant="default" size="xs" disabled={!hasNext} onClick={() => onChange(offset + limit)}>
          {t('common.next')}
        </Button>
      </Group>
    </Group>
  );
}
