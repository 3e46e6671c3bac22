import { ActionIcon, Alert, Anchor, Button, Card, Code, CopyButton, Group, NumberInput, Stack, Text, TextInput, Title, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useMe } from '../../api/auth';
import { FORWARDER_APPS, useDevices, useRegisterDevice, useRevokeDevice, useSetDeviceSilence } from '../../api/devices';
import type { ExecutorView } from '../../api/executors';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { When } from '../../components/When';
import { useI18n } from '../../i18n';

/** A value to paste into an app on the phone, with a button that copies it. */
function Pasteable({ label, value, testId }: { label: string; value: string; testId: string }) {
  const { t } = useI18n();
  return (
    <div>
      <Text size="xs" mt="xs">
        {label}
      </Text>
      <Group gap="xs" wrap="nowrap" align="flex-start">
        <Code block data-testid={testId} style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
          {value}
        </Code>
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? t('common.copied') : t('common.copy')}>
              <ActionIcon variant="light" size="lg" onClick={copy} aria-label={`${t('common.copy')}: ${label}`}>
                {copied ? <IconCheck size={18} /> : <IconCopy size={18} />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      </Group>
    </div>
  );
}

/**
 * Registers a phone by name; its token and signing secret stay on screen until the next one, shown
 * this once, with the address each forwarder app posts to (docs/devices.md), ready to paste.
 */
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
          <Pasteable label={t('devices.token')} value={register.data.token} testId="device-token" />
          <Pasteable label={t('devices.signingSecret')} value={register.data.signing_secret} testId="device-signing-secret" />
          <Text size="sm" fw={600} mt="md">
            {t('devices.forwarders')}
          </Text>
          <Text size="xs" c="dimmed">
            {t('devices.forwardersHint')}
          </Text>
          {FORWARDER_APPS.map((app) => (
            <Pasteable key={app.format} label={t(app.label)} value={register.data.forwarder_urls[app.format]} testId={`forwarder-url-${app.format}`} />
          ))}
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
          <DataTable
            rows={rows}
            rowKey={(d) => d.id}
            rowLabel={(d) => `phone ${d.name}`}
            minWidth={600}
            striped={false}
            columns={[
              { header: t('devices.name'), cell: (d) => d.name },
              { header: t('devices.lastSeen'), cell: (d) => <When at={d.last_seen_at} /> },
              { header: t('devices.battery'), cell: (d) => f.percent(d.battery, { digits: 0 }) },
              { header: t('devices.appVersion'), cell: (d) => d.app_version ?? '—' },
              {
                header: '',
                cell: (d) => (
                  <Button size="xs" variant="light" color="red" onClick={() => revoke.mutate(d.id)} loading={revoke.isPending && revoke.variables === d.id}>
                    {t('devices.revoke')}
                  </Button>
                ),
              },
            ]}
          />
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
