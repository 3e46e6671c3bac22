import { Alert, Badge, Button, Code, Group, Modal, Select, Stack, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useRef, useState } from 'react';
import { useMe } from '../../api/auth';
import { type IssuedPassword, type UserView, useCreateUser, useResetPassword, useUpdateUser, useUsers } from '../../api/users';
import { CsvLink } from '../../components/CsvLink';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Pager } from '../../components/Pager';
import { useNames } from '../../components/useNames';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { useI18n } from '../../i18n';

const LIMIT = 50;
const ROLES = ['support', 'finance', 'admin'];

/** What waits for a yes: resetting a user's password, or switching their sign-in off (with a reason). */
type Pending = { kind: 'reset' | 'disable'; user: UserView } | null;

/**
 * Confirms an irreversible act on a user, naming them and what follows (saying so when it is the
 * person's own sign-in); switching off asks the reason, which the audit log keeps.
 */
function ConfirmUserAction({
  pending,
  self,
  busy,
  onCancel,
  onConfirm,
}: {
  pending: Pending;
  self: boolean;
  busy: boolean;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
}) {
  const { t } = useI18n();
  const [reason, setReason] = useState('');
  const disabling = pending?.kind === 'disable';
  const title = pending ? t(disabling ? 'users.disableTitle' : 'users.resetTitle', { email: pending.user.email }) : '';
  const blocked = disabling && self;
  return (
    <Modal opened={pending !== null} onClose={onCancel} title={title} centered>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!blocked && !busy) onConfirm(reason.trim());
        }}
      >
        <Stack>
          <Text size="sm">{t(disabling ? 'users.disableBody' : 'users.resetBody')}</Text>
          {self && (
            <Alert color="red" role="alert">
              {t(disabling ? 'users.disableSelf' : 'users.resetSelf')}
            </Alert>
          )}
          {disabling && !self && (
            <Textarea label={t('users.reason')} required value={reason} onChange={(e) => setReason(e.currentTarget.value)} data-autofocus maxLength={500} />
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onCancel}>
              {t('common.cancel')}
            </Button>
            <Button type="submit" color="red" loading={busy} disabled={blocked || (disabling && reason.trim() === '')}>
              {disabling ? t('users.disable') : t('users.resetPassword')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** Staff sign-ins: create one (its password shown once), change a role, reset a password, switch a sign-in off. */
export function Users() {
  const { t } = useI18n();
  const names = useNames();
  const roleOptions = (roles: string[]) => roles.map((value) => ({ value, label: names.role(value) }));
  const me = useMe();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, LIMIT);
  const users = useUsers({ q: filters.q, role: filters.role, ...page });
  const create = useCreateUser();
  const update = useUpdateUser();
  const reset = useResetPassword();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string | null>('support');
  // The one password on screen, with the email the API answered it for: the last one issued, never another's.
  const [shown, setShown] = useState<IssuedPassword | null>(null);
  const [pending, setPending] = useState<Pending>(null);
  // A second click (or Enter) before the first answer is not a second request.
  const creating = useRef(false);
  const createUser = () => {
    if (creating.current) return;
    creating.current = true;
    setShown(null);
    create.mutate(
      { email, role: role ?? 'support' },
      {
        onSuccess: (issued) => {
          setShown(issued);
          setEmail('');
        },
        onSettled: () => {
          creating.current = false;
        },
      },
    );
  };
  const confirmPending = (reason: string) => {
    if (!pending) return;
    const { kind, user } = pending;
    if (kind === 'reset') {
      setShown(null);
      reset.mutate(user.id, { onSuccess: (issued) => setShown(issued), onSettled: () => setPending(null) });
    } else {
      update.mutate({ id: user.id, is_active: false, reason }, { onSettled: () => setPending(null) });
    }
  };
  return (
    <Stack>
      <Group>
        <Title order={2}>{t('users.title')}</Title>
        <CsvLink path="/admin/v1/users" query={{ q: filters.q, role: filters.role, offset: page.offset }} />
      </Group>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          createUser();
        }}
      >
        <Group align="flex-end">
          <TextInput label={t('login.email')} type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} w={280} />
          <Select label={t('users.role')} data={roleOptions(ROLES)} value={role} onChange={setRole} w={140} allowDeselect={false} />
          <Button type="submit" loading={create.isPending} disabled={create.isPending}>
            {t('users.create')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={create.error ?? update.error ?? reset.error} />
      {shown && (
        <Alert color="yellow" title={t('users.passwordFor', { email: shown.email })}>
          {shown.email}: <Code data-testid="one-time-password">{shown.password}</Code>
        </Alert>
      )}
      <ConfirmUserAction
        key={pending ? `${pending.kind}:${pending.user.id}` : 'none'}
        pending={pending}
        self={pending?.user.id === me.data?.user.id}
        busy={reset.isPending || update.isPending}
        onCancel={() => setPending(null)}
        onConfirm={confirmPending}
      />
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
          data={roleOptions([...ROLES, 'executor', 'merchant'])}
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
                      data={roleOptions(ROLES)}
                      value={u.role}
                      allowDeselect={false}
                      onChange={(value) => value && update.mutate({ id: u.id, role: value })}
                      w={120}
                      aria-label={`${u.email} role`}
                    />
                  ) : (
                    names.role(u.role)
                  )}
                </Table.Td>
                <Table.Td>{u.two_factor ? <Badge color="green">{names.onOff(true)}</Badge> : <Badge color="gray">{names.onOff(false)}</Badge>}</Table.Td>
                <Table.Td>
                  {u.is_active ? '✓' : '—'}
                  {u.must_change_password && (
                    <Badge color="yellow" ml="xs">
                      {t('users.mustChange')}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap="xs">
                    <Button
                      size="xs"
                      variant="light"
                      onClick={() => setPending({ kind: 'reset', user: u })}
                      aria-label={`${t('users.resetPassword')} ${u.email}`}
                    >
                      {t('users.resetPassword')}
                    </Button>
                    <Button
                      size="xs"
                      variant="light"
                      color={u.is_active ? 'red' : 'green'}
                      aria-label={`${u.is_active ? t('users.disable') : t('users.enable')} ${u.email}`}
                      onClick={() => (u.is_active ? setPending({ kind: 'disable', user: u }) : update.mutate({ id: u.id, is_active: true }))}
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
