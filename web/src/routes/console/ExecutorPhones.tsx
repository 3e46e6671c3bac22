import { Alert, Anchor, Button, Card, Code, Group, NumberInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useMe } from '../../api/auth';
import { useDevices, useRegisterDevice, useRevokeDevice, useSetDeviceSilence } from '../../api/devices';
import type { ExecutorView } from '../../api/executors';
import { ErrorAlert } from '../../components/ErrorAlert';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

/** Registers a phone by name; its token and signing secret stay on screen until the next one, shown this once. */
function RegisterPhone({ executorId }: { executorId: string }) {
  const { t } = useI18n();
  const register = useRegisterDevice(executorId);
  const [name, setName] = useState('');
  return (
    <>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          register.mutate(name.trim(), { onSuccess: () => setName('') });
        }}
      >
        <Group align="flex-end">
          <TextInput label={t('devices.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} w={260} />
          <Button type="submit" loading={register.isPending} disabled={!name.trim()}>
            {t('devices.register')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={register.error} />
      {register.data && (
        <Alert color="yellow" title={`${register.data.name}: ${t('devices.once')}`}>
          <Text size="xs">{t('devices.token')}</Text>
          <Code block data-testid="device-token">
            {register.data.token}
          </Code>
          <Text size="xs" mt="xs">
            {t('devices.signingSecret')}
          </Text>
          <Code block data-testid="device-signing-secret">
            {register.data.signing_secret}
          </Code>
        </Alert>
      )}
    </>
  );
}

/** How long the phones may be silent before the executor's cards leave the cascade; empty: never. */
function Silence({ executor }: { executor: ExecutorView }) {
  const { t } = useI18n();
  const save = useSetDeviceSilence(executor.id);
  const [minutes, setMinutes] = useState<number | string>(executor.device_silence_minutes ?? '');
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate(minutes === '' ? null : Number(minutes));
      }}
    >
      <Group align="flex-end">
        <NumberInput
          label={t('devices.silence')}
          description={t('devices.silenceHint')}
          value={minutes}
          onChange={setMinutes}
          min={1}
          max={10080}
          allowDecimal={false}
          allowNegative={false}
          w={300}
        />
        <Button type="submit" variant="light" loading={save.isPending}>
          {t('common.save')}
        </Button>
      </Group>
      <ErrorAlert error={save.error} />
    </form>
  );
}

/** The executor's phones: when each last reported, revoke one; an admin registers one and sets the silence rule. */
export function ExecutorPhones({ executor }: { executor: ExecutorView }) {
  const { t, f } = useI18n();
  const me = useMe();
  const devices = useDevices(executor.id);
  const revoke = useRevokeDevice(executor.id);
  const isAdmin = me.data?.user.role === 'admin';
  const rows = devices.data?.devices ?? [];
  return (
    <Card withBorder aria-label={t('devices.title')}>
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={4}>{t('devices.title')}</Title>
          <Anchor component={Link} to={'/device-messages' as never} search={{ executor_id: executor.id, status: 'all' } as never} size="sm">
            {t('devices.messages')}
          </Anchor>
        </Group>
        {executor.devices_silent && (
          <Alert color="orange" title={t('executors.phonesSilent')}>
            {t('devices.silentAlert')}
          </Alert>
        )}
        <ErrorAlert error={devices.error ?? revoke.error} />
        {devices.isSuccess && rows.length === 0 && <Text c="dimmed">{t('devices.none')}</Text>}
        {rows.length > 0 && (
          <Table.ScrollContainer minWidth={600}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('devices.name')}</Table.Th>
                  <Table.Th>{t('devices.lastSeen')}</Table.Th>
                  <Table.Th>{t('devices.battery')}</Table.Th>
                  <Table.Th>{t('devices.appVersion')}</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((d) => (
                  <Table.Tr key={d.id} aria-label={`phone ${d.name}`}>
                    <Table.Td>{d.name}</Table.Td>
                    <Table.Td>
                      <When at={d.last_seen_at} />
                    </Table.Td>
                    <Table.Td>{f.percent(d.battery, { digits: 0 })}</Table.Td>
                    <Table.Td>{d.app_version ?? '—'}</Table.Td>
                    <Table.Td>
                      <Button size="xs" variant="light" color="red" onClick={() => revoke.mutate(d.id)} loading={revoke.isPending && revoke.variables === d.id}>
                        {t('devices.revoke')}
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        {isAdmin && <RegisterPhone executorId={executor.id} />}
        {isAdmin ? (
          <Silence key={String(executor.device_silence_minutes)} executor={executor} />
        ) : (
          <Text size="sm" c="dimmed">
            {t('devices.silence')}: {executor.device_silence_minutes ?? '—'}
          </Text>
        )}
      </Stack>
    </Card>
  );
}
