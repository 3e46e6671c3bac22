import { Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useAudit } from '../../api/users';
import { CsvLink } from '../../components/CsvLink';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Pager } from '../../components/Pager';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { useI18n } from '../../i18n';

const LIMIT = 100;

/** Who did what, from where, and what changed: the audit log, filtered in the URL. */
export function Audit() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, LIMIT);
  const log = useAudit({ actor: filters.actor, action: filters.action, object_id: filters.object_id, ...page });
  return (
    <Stack>
      <Group>
        <Title order={2}>{t('audit.title')}</Title>
        <CsvLink path="/admin/v1/audit" query={{ actor: filters.actor, action: filters.action, object_id: filters.object_id, offset: page.offset }} />
      </Group>
      <Group>
        <TextInput label={t('audit.actor')} defaultValue={filters.actor} onChange={(e) => setFilters({ actor: e.currentTarget.value })} />
        <TextInput
          label={t('audit.action')}
          placeholder="dispute."
          defaultValue={filters.action}
          onChange={(e) => setFilters({ action: e.currentTarget.value })}
        />
        <TextInput label={t('audit.object')} defaultValue={filters.object_id} onChange={(e) => setFilters({ object_id: e.currentTarget.value })} />
      </Group>
      <ErrorAlert error={log.error} />
      <Table.ScrollContainer minWidth={900}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('common.created')}</Table.Th>
              <Table.Th>{t('audit.actor')}</Table.Th>
              <Table.Th>{t('audit.action')}</Table.Th>
              <Table.Th>{t('audit.object')}</Table.Th>
              <Table.Th>{t('audit.change')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {log.data?.entries.map((e) => (
              <Table.Tr key={e.id}>
                <Table.Td>{new Date(e.created_at).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Text size="sm">{e.actor}</Text>
                  <Text size="xs" c="dimmed">
                    {e.ip}
                  </Text>
                </Table.Td>
                <Table.Td>{e.action}</Table.Td>
                <Table.Td>
                  <Text size="xs">
                    {e.object_type} {e.object_id}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Code block fz="xs">
                    {e.before ? JSON.stringify(e.before) : '—'} → {e.after ? JSON.stringify(e.after) : '—'}
                  </Code>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Pager
        offset={page.offset}
        limit={LIMIT}
        count={log.data?.entries.length ?? 0}
        total={log.data?.total}
        onChange={(offset) => setFilters({ offset: String(offset) })}
      />
    </Stack>
  );
}
