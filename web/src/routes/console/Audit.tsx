import { Code, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { useAudit } from '../../api/users';
import { CsvLink } from '../../components/CsvLink';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Pager } from '../../components/Pager';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
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
      <DataTable
        rows={log.data?.entries ?? []}
        loaded={log.isSuccess}
        rowKey={(e) => String(e.id)}
        minWidth={900}
        columns={[
          { header: t('common.created'), cell: (e) => <When at={e.created_at} /> },
          {
            header: t('audit.actor'),
            cell: (e) => (
              <>
                <Text size="sm">{e.actor}</Text>
                <Text size="xs" c="dimmed">
                  {e.ip}
                </Text>
              </>
            ),
          },
          { header: t('audit.action'), cell: (e) => e.action },
          {
            header: t('audit.object'),
            cell: (e) => (
              <Text size="xs">
                {e.object_type} {e.object_id}
              </Text>
            ),
          },
          {
            header: t('audit.change'),
            cell: (e) => (
              <Code block fz="xs">
                {e.before ? JSON.stringify(e.before) : '—'} → {e.after ? JSON.stringify(e.after) : '—'}
              </Code>
            ),
          },
        ]}
      />
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
