import { Badge, Code, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { type AuditEntry, useAudit } from '../../api/users';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Pager } from '../../components/Pager';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

const LIMIT = 100;

type TFunction = ReturnType<typeof useI18n>['t'];

/** The kinds of object the audit rows name, each with its name on screen in both languages. */
const OBJECT_TYPES = [
  'payment',
  'payout',
  'withdrawal',
  'notification',
  'device_message',
  'device',
  'executor',
  'requisite',
  'merchant',
  'terminal',
  'user',
  'session',
  'webhook_event',
  'provider',
  'bank',
  'rate',
  'settings',
] as const;
type ObjectType = (typeof OBJECT_TYPES)[number];
/** Its name's key: a kind without a name in en.json and ru.json does not compile. */
const typeKey = (type: ObjectType) => `audit.type.${type}` as const;
const isObjectType = (type: string): type is ObjectType => (OBJECT_TYPES as readonly string[]).includes(type);

/** Who acted, as a reader tells them apart: a person's email as is; the token, an executor's apps and a phone by kind. */
function Actor({ actor, t }: { actor: string; t: TFunction }) {
  const [kind, ...rest] = actor.split(':');
  const name = rest.join(':');
  if (actor === 'token') return <Badge variant="light">{t('audit.byToken')}</Badge>;
  if (kind === 'executor' && name) return <ActorOfKind label={t('audit.byExecutor')} name={name} />;
  if (kind === 'device' && name) return <ActorOfKind label={t('audit.byDevice')} name={name} />;
  return <Text size="sm">{actor}</Text>;
}

function ActorOfKind({ label, name }: { label: string; name: string }) {
  return (
    <Group gap={6} wrap="nowrap">
      <Badge variant="light" color="grape">
        {label}
      </Badge>
      <Text size="sm">{name}</Text>
    </Group>
  );
}

/** The object's kind in the reader's language (an unknown kind as the log names it), then its id. */
function ObjectOf({ entry, t }: { entry: AuditEntry; t: TFunction }) {
  return (
    <>
      <Text size="sm">{isObjectType(entry.object_type) ? t(typeKey(entry.object_type)) : entry.object_type}</Text>
      <Text size="xs" c="dimmed">
        {entry.object_id}
      </Text>
    </>
  );
}

/** Who did what, from where, and what changed: the audit log, filtered in the URL. */
export function Audit() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, LIMIT);
  const log = useAudit({ actor: filters.actor, action: filters.action, object_type: filters.object_type, object_id: filters.object_id, ...page });
  return (
    <Stack>
      <ListHeader
        title={t('audit.title')}
        csv={{
          path: '/admin/v1/audit',
          query: { actor: filters.actor, action: filters.action, object_type: filters.object_type, object_id: filters.object_id, offset: page.offset },
        }}
      >
        <TextInput label={t('audit.actor')} defaultValue={filters.actor} onChange={(e) => setFilters({ actor: e.currentTarget.value })} />
        <TextInput
          label={t('audit.action')}
          placeholder="dispute."
          defaultValue={filters.action}
          onChange={(e) => setFilters({ action: e.currentTarget.value })}
        />
        <Select
          label={t('audit.objectType')}
          data={OBJECT_TYPES.map((type) => ({ value: type, label: t(typeKey(type)) }))}
          value={filters.object_type ?? null}
          onChange={(v) => setFilters({ object_type: v ?? undefined })}
          clearable
          searchable
          w={200}
        />
        <TextInput label={t('audit.object')} defaultValue={filters.object_id} onChange={(e) => setFilters({ object_id: e.currentTarget.value })} />
      </ListHeader>
      <ErrorAlert error={log.error} />
      <DataTable
        rows={log.data?.entries ?? []}
        loaded={log.isSuccess}
        rowKey={(e) => String(e.id)}
        rowLabel={(e) => `audit ${e.action}`}
        minWidth={900}
        columns={[
          { header: t('common.created'), cell: (e) => <When at={e.created_at} /> },
          {
            header: t('audit.actor'),
            cell: (e) => (
              <>
                <Actor actor={e.actor} t={t} />
                <Text size="xs" c="dimmed">
                  {e.ip}
                </Text>
              </>
            ),
          },
          { header: t('audit.action'), cell: (e) => e.action },
          {
            header: t('audit.object'),
            cell: (e) => <ObjectOf entry={e} t={t} />,
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
