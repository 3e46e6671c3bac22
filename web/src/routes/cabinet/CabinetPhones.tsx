import { Alert, Button, Card, Code, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useMyDevices, useRegisterDevice, useRevokeDevice } from '../../api/cabinet';
import { ErrorAlert } from '../../components/ErrorAlert';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

/** The phones that forward bank messages: when each last reported; register one (its token and secret shown once), revoke one. */
export function CabinetPhones() {
  const { t, f } = useI18n();
  const devices = useMyDevices();
  const register = useRegisterDevice();
  const revoke = useRevokeDevice();
  const [name, setName] = useState('');
  return (
    <Stack>
      <Title order={4}>{t('cabinet.phones')}</Title>
      {devices.data?.devices.map((d) => (
        <Card withBorder padding="sm" key={d.id}>
          <Group justify="space-between" wrap="nowrap">
            <div>
              <Text fw={600}>{d.name}</Text>
              <Text size="xs" c="dimmed">
                {t('cabinet.lastSeen')}: <When at={d.last_seen_at} />
                {d.battery !== null ? ` · ${f.percent(d.battery, { digits: 0 })}` : ''}
              </Text>
            </div>
            <Button size="xs" variant="light" color="red" onClick={() => revoke.mutate(d.id)}>
              {t('security.revoke')}
            </Button>
          </Group>
        </Card>
      ))}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          register.mutate(name.trim(), { onSuccess: () => setName('') });
        }}
      >
        <Group align="flex-end" wrap="nowrap">
          <TextInput label={t('banks.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} style={{ flex: 1 }} />
          <Button type="submit" disabled={!name.trim()} loading={register.isPending}>
            {t('cabinet.addPhone')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={register.error ?? revoke.error ?? devices.error} />
      {register.data && (
        <Alert color="yellow" title={t('cabinet.phoneOnce')}>
          <Text size="xs">token</Text>
          <Code block>{register.data.token}</Code>
          <Text size="xs" mt="xs">
            signing secret
          </Text>
          <Code block>{register.data.signing_secret}</Code>
        </Alert>
      )}
    </Stack>
  );
}
