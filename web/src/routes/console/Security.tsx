import { Alert, Button, Card, Code, Group, Image, List, PasswordInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useChangePassword, useMe, useRevokeSession, useSessions, useTwoFactorEnable, useTwoFactorSetup } from '../../api/auth';
import { telegramBase } from '../../api/telegram';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { TelegramLink } from '../../components/TelegramLink';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

function TwoFactor() {
  const { t } = useI18n();
  const me = useMe();
  const setup = useTwoFactorSetup();
  const enable = useTwoFactorEnable();
  const [code, setCode] = useState('');
  if (enable.data) {
    return (
      <Stack>
        <Alert color="green">{t('security.twoFactorOn')}</Alert>
        <Text fw={500}>{t('security.recovery')}</Text>
        <List aria-label="recovery codes" spacing={2}>
          {enable.data.recovery_codes.map((c) => (
            <List.Item key={c}>
              <Code>{c}</Code>
            </List.Item>
          ))}
        </List>
        <Button onClick={() => void enable.done()} w="fit-content">
          {t('common.done')}
        </Button>
      </Stack>
    );
  }
  if (me.data?.two_factor) return <Alert color="green">{t('security.twoFactorOn')}</Alert>;
  return (
    <Stack>
      {me.data?.two_factor_required && <Alert color="orange">{t('security.twoFactorRequired')}</Alert>}
      {!setup.data ? (
        <Button onClick={() => setup.mutate()} loading={setup.isPending} w="fit-content">
          {t('security.enrol')}
        </Button>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            enable.mutate(code.trim());
          }}
        >
          <Stack>
            <Text size="sm">{t('security.scan')}</Text>
            <Image src={setup.data.qr_code} alt="QR" w={200} h={200} />
            <Text size="sm">
              {t('security.key')}: <Code data-testid="totp-secret">{setup.data.secret}</Code>
            </Text>
            <TextInput
              label={t('login.otp')}
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
              inputMode="numeric"
              autoComplete="one-time-code"
              w={220}
            />
            <ErrorAlert error={enable.error} />
            <Button type="submit" loading={enable.isPending} w="fit-content">
              {t('security.enable')}
            </Button>
          </Stack>
        </form>
      )}
      <ErrorAlert error={setup.error} />
    </Stack>
  );
}

function Sessions() {
  const { t } = useI18n();
  const sessions = useSessions();
  const revoke = useRevokeSession();
  return (
    <DataTable
      rows={sessions.data?.sessions ?? []}
      loaded={sessions.isSuccess}
      rowKey={(s) => s.id}
      rowLabel={(s) => `session ${s.ip}`}
      minWidth={500}
      striped={false}
      columns={[
        {
          header: '',
          cell: (s) => (
            <>
              <Text size="sm">{s.user_agent?.slice(0, 60) ?? '—'}</Text>
              <Text size="xs" c="dimmed">
                {s.ip} · <When at={s.last_seen_at} />
              </Text>
            </>
          ),
        },
        {
          header: '',
          cell: (s) =>
            s.current ? (
              <Text size="sm" c="dimmed">
                {t('security.thisSession')}
              </Text>
            ) : (
              <Button size="xs" variant="light" color="red" onClick={() => revoke.mutate(s.id)}>
                {t('security.revoke')}
              </Button>
            ),
        },
      ]}
    />
  );
}

function ChangePassword() {
  const { t } = useI18n();
  const change = useChangePassword();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        change.mutate({ current_password: current, new_password: next });
      }}
    >
      <Stack>
        <PasswordInput label={t('security.current')} value={current} onChange={(e) => setCurrent(e.currentTarget.value)} autoComplete="current-password" />
        <PasswordInput label={t('security.new')} value={next} onChange={(e) => setNext(e.currentTarget.value)} autoComplete="new-password" />
        <ErrorAlert error={change.error} />
        {change.isSuccess && <Alert color="green">{t('security.changed')}</Alert>}
        <Group>
          <Button type="submit" loading={change.isPending}>
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/**
 * The signed-in person's own security and settings: two-factor, the password, their Telegram chat
 * (staff and merchants link it here, beside two-factor; the executor's cabinet has a Telegram
 * screen of its own, a tap away on the phone), their sessions.
 */
export function Security() {
  const { t } = useI18n();
  const me = useMe();
  const role = me.data?.user.role;
  return (
    <Stack>
      <Title order={2}>{t('security.title')}</Title>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Title order={4} mb="sm">
            {t('security.twoFactor')}
          </Title>
          <TwoFactor />
        </Card>
        <Card withBorder>
          <Title order={4} mb="sm">
            {t('security.password')}
          </Title>
          <ChangePassword />
        </Card>
        {role && role !== 'executor' && (
          <Card withBorder>
            <Title order={4} mb="sm">
              {t('telegram.title')}
            </Title>
            <TelegramLink base={telegramBase(role)} />
          </Card>
        )}
      </SimpleGrid>
      <Card withBorder>
        <Title order={4} mb="sm">
          {t('security.sessions')}
        </Title>
        <Sessions />
      </Card>
    </Stack>
  );
}
