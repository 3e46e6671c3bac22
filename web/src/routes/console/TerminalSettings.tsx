import { Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/client';
import { type TerminalUrls, type TerminalView, useUpdateTerminalUrls } from '../../api/terminals';
import { ErrorAlert } from '../../components/ErrorAlert';
import { type MessageKey, useI18n } from '../../i18n';

const FIELDS = [
  { key: 'notify_url', label: 'terminals.notifyUrl', hint: 'terminals.notifyUrlHint', invalid: 'terminals.invalid.notifyUrl' },
  { key: 'return_url', label: 'terminals.returnUrl', hint: 'terminals.returnUrlHint', invalid: 'terminals.invalid.url' },
  { key: 'fail_url', label: 'terminals.failUrl', hint: 'terminals.failUrlHint', invalid: 'terminals.invalid.url' },
] as const satisfies readonly { key: keyof TerminalUrls; label: MessageKey; hint: MessageKey; invalid: MessageKey }[];

/**
 * A terminal's addresses: where its payments' and payouts' webhooks go when they name none (the same
 * guard as the API's: no internal address), and where the payment page sends the payer back after
 * a payment that went through or did not. An empty field clears the address.
 */
export function TerminalSettings({ terminal }: { terminal: TerminalView }) {
  const { t } = useI18n();
  const save = useUpdateTerminalUrls();
  const stored = (key: keyof TerminalUrls) => terminal[key] ?? '';
  const [form, setForm] = useState<Record<keyof TerminalUrls, string>>({
    notify_url: stored('notify_url'),
    return_url: stored('return_url'),
    fail_url: stored('fail_url'),
  });
  const refused = save.error instanceof ApiError && save.error.code === 'VALIDATION' ? save.error.data?.field : undefined;
  const changes: TerminalUrls = {};
  for (const { key } of FIELDS) if (form[key].trim() !== stored(key)) changes[key] = form[key].trim() === '' ? null : form[key].trim();
  const changed = Object.keys(changes).length > 0;
  return (
    <form
      aria-label={t('terminals.settings', { name: terminal.name })}
      onSubmit={(event) => {
        event.preventDefault();
        if (changed && !save.isPending) save.mutate({ id: terminal.id, ...changes });
      }}
    >
      <Stack gap="xs">
        <Text size="sm" fw={500}>
          {t('terminals.addresses')}
        </Text>
        {FIELDS.map(({ key, label, hint, invalid }) => (
          <TextInput
            key={key}
            label={t(label)}
            description={t(hint)}
            placeholder="https://"
            type="url"
            value={form[key]}
            maxLength={2048}
            error={refused === key ? `${t(invalid)} (${(save.error as Error).message})` : undefined}
            onChange={(e) => {
              const value = e.currentTarget.value;
              save.reset();
              setForm((old) => ({ ...old, [key]: value }));
            }}
          />
        ))}
        {save.error && !FIELDS.some((f) => f.key === refused) ? <ErrorAlert error={save.error} /> : null}
        {save.isSuccess && !changed && (
          <Text size="sm" c="green" role="status">
            {t('terminals.saved')}
          </Text>
        )}
        <Group>
          <Button type="submit" size="xs" loading={save.isPending} disabled={!changed || save.isPending}>
            {t('terminals.saveUrls')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
