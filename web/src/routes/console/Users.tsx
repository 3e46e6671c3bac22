import { Alert, Badge, Button, Code, Group, Modal, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useRef, useState } from 'react';
import { useMe } from '../../api/auth';
import { useExecutors } from '../../api/executors';
import { useMerchants } from '../../api/merchants';
import {
  type IssuedPassword,
  type UserView,
  useCreateCabinetSignIn,
  useCreateUser,
  useResetPassword,
  useResetTwoFactor,
  useUpdateUser,
  useUsers,
} from '../../api/users';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { ListHeader } from '../../components/ListHeader';
import { Pager } from '../../components/Pager';
import { useNames } from '../../components/useNames';
import { pageOf, useUrlFilters } from '../../components/useUrlFilters';
import { useI18n } from '../../i18n';

const LIMIT = 50;
const ROLES = ['support', 'finance', 'admin'];
/** Sign-ins to the cabinets: each belongs to one executor or one merchant, chosen beside the email. */
const CABINET_ROLES = ['executor', 'merchant'] as const;
type CabinetRole = (typeof CABINET_ROLES)[number];
const isCabinetRole = (role: string | null): role is CabinetRole => CABINET_ROLES.includes(role as CabinetRole);

/** What waits for a yes: resetting a user's password or two-factor, or switching their sign-in off (with a reason). */
type Pending = { kind: 'reset' | 'disable' | 'twoFactor'; user: UserView } | null;

const CONFIRM_TEXTS = {
  reset: { title: 'users.resetTitle', body: 'users.resetBody', self: 'users.resetSelf', button: 'users.resetPassword' },
  disable: { title: 'users.disableTitle', body: 'users.disableBody', self: 'users.disableSelf', button: 'users.disable' },
  twoFactor: { title: 'users.twoFactorResetTitle', body: 'users.twoFactorResetBody', self: 'users.twoFactorResetSelf', button: 'users.twoFactorReset' },
} as const;

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
  const texts = CONFIRM_TEXTS[pending?.kind ?? 'reset'];
  const title = pending ? t(texts.title, { email: pending.user.email }) : '';
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
          <Text size="sm">{t(texts.body)}</Text>
          {self && (
            <Alert color="red" role="alert">
              {t(texts.self)}
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
              {t(texts.button)}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/**
 * Sign-ins: create a staff member's, an executor's or a merchant's (its password shown once), change
 * a staff role, reset a password or a lost two-factor, switch a sign-in off.
 */
export function Users() {
  const { t } = useI18n();
  const names = useNames();
  const roleOptions = (roles: string[]) => roles.map((value) => ({ value, label: names.role(value) }));
  const me = useMe();
  const [filters, setFilters] = useUrlFilters();
  const page = pageOf(filters, LIMIT);
  const users = useUsers({ q: filters.q, role: filters.role, ...page });
  const create = useCreateUser();
  const createCabinet = useCreateCabinetSignIn();
  const resetTwoFactor = useResetTwoFactor();
  const [owner, setOwner] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
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
    setDone(null);
    const handlers = {
      onSuccess: (issued: IssuedPassword) => {
        setShown(issued);
        setEmail('');
      },
      onSettled: () => {
        creating.current = false;
      },
    };
    if (isCabinetRole(role)) {
      if (!owner) {
        creating.current = false;
        return;
      }
      createCabinet.mutate({ email, role, ownerId: owner }, handlers);
    } else create.mutate({ email, role: role ?? 'support' }, handlers);
  };
  const confirmPending = (reason: string) => {
    if (!pending) return;
    const { kind, user } = pending;
    setDone(null);
    if (kind === 'reset') {
      setShown(null);
      reset.mutate(user.id, { onSuccess: (issued) => setShown(issued), onSettled: () => setPending(null) });
    } else if (kind === 'twoFactor') {
      resetTwoFactor.mutate(user.id, { onSuccess: () => setDone(t('users.twoFactorResetDone', { email: user.email })), onSettled: () => setPending(null) });
    } else {
      update.mutate({ id: user.id, is_active: false, reason }, { onSettled: () => setPending(null) });
    }
  };
  return (
    <Stack>
      <ListHeader title={t('users.title')} csv={{ path: '/admin/v1/users', query: { q: filters.q, role: filters.role, offset: page.offset } }}>
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
      </ListHeader>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          createUser();
        }}
      >
        <Group align="flex-end">
          <TextInput label={t('login.email')} type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} w={280} />
          <Select
            label={t('users.role')}
            data={roleOptions([...ROLES, ...CABINET_ROLES])}
            value={role}
            onChange={(value) => {
              setRole(value);
              setOwner(null);
            }}
            w={140}
            allowDeselect={false}
          />
          {isCabinetRole(role) && <OwnerSelect role={role} value={owner} onChange={setOwner} />}
          <Button
            type="submit"
            loading={create.isPending || createCabinet.isPending}
            disabled={create.isPending || createCabinet.isPending || (isCabinetRole(role) && !owner)}
          >
            {t('users.create')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={create.error ?? createCabinet.error ?? update.error ?? reset.error ?? resetTwoFactor.error} />
      {done && (
        <Alert color="green" role="status">
          {done}
        </Alert>
      )}
      {shown && (
        <Alert color="yellow" title={t('users.passwordFor', { email: shown.email })}>
          {shown.email}: <Code data-testid="one-time-password">{shown.password}</Code>
        </Alert>
      )}
      <ConfirmUserAction
        key={pending ? `${pending.kind}:${pending.user.id}` : 'none'}
        pending={pending}
        self={pending?.user.id === me.data?.user.id}
        busy={reset.isPending || update.isPending || resetTwoFactor.isPending}
        onCancel={() => setPending(null)}
        onConfirm={confirmPending}
      />
      <DataTable
        rows={users.data?.users ?? []}
        loaded={users.isSuccess}
        rowKey={(u) => u.id}
        rowLabel={(u) => `user ${u.email}`}
        minWidth={700}
        columns={[
          { header: t('login.email'), cell: (u) => u.email },
          {
            header: t('users.role'),
            cell: (u) =>
              ROLES.includes(u.role) ? (
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
              ),
          },
          {
            header: t('users.twoFactor'),
            cell: (u) => (u.two_factor ? <Badge color="green">{names.onOff(true)}</Badge> : <Badge color="gray">{names.onOff(false)}</Badge>),
          },
          {
            header: t('users.active'),
            cell: (u) => (
              <>
                {u.is_active ? '✓' : '—'}
                {u.must_change_password && (
                  <Badge color="yellow" ml="xs">
                    {t('users.mustChange')}
                  </Badge>
                )}
              </>
            ),
          },
          {
            header: t('common.actions'),
            wide: true,
            cell: (u) => (
              <Group gap="xs">
                <Button size="xs" variant="light" onClick={() => setPending({ kind: 'reset', user: u })} aria-label={`${t('users.resetPassword')} ${u.email}`}>
                  {t('users.resetPassword')}
                </Button>
                {u.two_factor && (
                  <Button
                    size="xs"
                    variant="light"
                    color="orange"
                    onClick={() => setPending({ kind: 'twoFactor', user: u })}
                    aria-label={`${t('users.twoFactorReset')} ${u.email}`}
                  >
                    {t('users.twoFactorReset')}
                  </Button>
                )}
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
            ),
          },
        ]}
      />
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

/** Whose cabinet a new sign-in opens: one executor or one merchant, by name. */
function OwnerSelect({ role, value, onChange }: { role: CabinetRole; value: string | null; onChange(value: string | null): void }) {
  const { t } = useI18n();
  const executors = useExecutors();
  const merchants = useMerchants();
  const data =
    role === 'executor'
      ? (executors.data?.executors ?? []).map((e) => ({ value: e.id, label: e.name }))
      : (merchants.data?.merchants ?? []).map((m) => ({ value: m.id, label: m.name }));
  return (
    <Select
      label={t(role === 'executor' ? 'users.ownerExecutor' : 'users.ownerMerchant')}
      data={data}
      value={value}
      onChange={onChange}
      searchable
      required
      w={240}
      nothingFoundMessage={t('common.empty')}
    />
  );
}
