import { Alert, Badge, Button, Code, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useCreateUser, useResetPassword, useUpdateUser, useUsers } from '../../api/users';
import { CsvLink } from '../../components/CsvLink';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Pager } from '../../components/Pager';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { useI18n } from '../../i18n';

const LIMIT = 50;
const ROLES = ['support', 'finance', 'admin'];

/** Staff sign-ins: create one (its password shown once), change a role, reset a password, switch a sign-in off. */
export function Users() {
  const { t } = useI18n();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, LIMIT);
  const users = useUsers({ q: filters.q, role: filters.role, ...page });
  const create = useCreateUser();
  const update = useUpdateUser();
  const reset = useResetPassword();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string | null>('support');
  const shown = create.data ?? (reset.data ? { email: reset.variables, password: reset.data.password } : null);
  return (
    <Stack>
      <Group>
        <Title order={2}>{t('users.title')}</Title>
        <CsvLink path="/admin/v1/users" query={{ q: filters.q, role: filters.role, offset: page.offset }} />
      </Group>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({ email, role: role ?? 'support' }, { onSuccess: () => setEmail('') });
        }}
      >
        <Group align="flex-end">
          <TextInput label={t('login.email')} type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} w={280} />
          <Select label={t('users.role')} data={ROLES} value={role} onChange={setRole} w={140} allowDeselect={false} />
          <Button type="submit" loading={create.isPending}>
            {t('users.create')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={create.error ?? update.error ?? reset.error} />
      {shown && (
        <Alert color="yellow" title={t('users.passwordOnce')}>
          {shown.email}: <Code>{shown.password}</Code>
        </Alert>
      )}
      <Group>
        <TextInput
          placeholder={t('common.search')}
          aria-label={t('common.search')}
          defaultValue={filters.q}
          onChange={(e) => setFilters({ q: e.currentTarget.value })}
          w={260}
        />
        <Select
          placeholder={t('users.role')}
          data={[...ROLES, 'executor', 'merchant']}
          value={filters.role ?? null}
          onChange={(value) => setFilters({ role: value ?? undefined })}
          clearable
          w={160}
        />
      </Group>
      <Table.ScrollContainer minWidth={700}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('login.email')}</Table.Th>
              <Table.Th>{t('users.role')}</Table.Th>
              <Table.Th>{t('users.twoFactor')}</Table.Th>
              <Table.Th>{t('users.active')}</Table.Th>
              <Table.Th>{t('common.actions')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {users.data?.users.map((u) => (
              <Table.Tr key={u.id}>
                <Table.Td>{u.email}</Table.Td>
                <Table.Td>
                  {ROLES.includes(u.role) ? (
                    <Select
                      size="xs"
                      data={ROLES}
                      value={u.role}
                      allowDeselect={false}
                      onChange={(value) => value && update.mutate({ id: u.id, role: value })}
                      w={120}
                      aria-label={`${u.email} role`}
                    />
                  ) : (
                    u.role
                  )}
                </Table.Td>
                <Table.Td>{u.two_factor ? <Badge color="green">on</Badge> : <Badge color="gray">off</Badge>}</Table.Td>
                <Table.Td>{u.is_active ? '✓' : '—'}</Table.Td>
                <Table.Td>
                  <Group gap="xs">
                    <Button size="xs" variant="light" onClick={() => reset.mutate(u.id)}>
                      {t('users.resetPassword')}
                    </Button>
                    <Button
                      size="xs"
                      variant="light"
                      color={u.is_active ? 'red' : 'green'}
                      onClick={() => update.mutate({ id: u.id, is_active: !u.is_active })}
                    >
                      {u.is_active ? t('users.disable') : t('users.enable')}
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {users.isSuccess && users.data.users.length === 0 && <Text c="dimmed">{t('common.empty')}</Text>}
      <Pager
        offset={page.offset}
        limit={LIMIT}
        count={users.data?.users.length ?? 0}
        total={users.data?.total}
        onChange={(offset) => setFilters({ offset: String(offset) })}
      />
    </Stack>
  );
}
