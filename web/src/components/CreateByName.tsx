import { Alert, Button, Code, Group, TextInput } from '@mantine/core';
import { useState } from 'react';
import { useI18n } from '../i18n';
import { ErrorAlert, useFieldError } from './ErrorAlert';

/**
 * "New …" by name, for objects born with a secret shown once (a merchant's Secret Key, an
 * executor's token): the secret stays on screen until the next create, with a store-it-now title.
 */
export function CreateByName({
  label,
  secretTitle,
  create,
}: {
  label: string;
  secretTitle: string;
  create: { mutate(name: string, options: { onSuccess(): void }): void; isPending: boolean; error: unknown; data?: { name: string } & Record<string, unknown> };
}) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const fieldError = useFieldError(create.error);
  const secret = create.data ? Object.entries(create.data).find(([key]) => key === 'secret_key' || key === 'token')?.[1] : undefined;
  return (
    <>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(name.trim(), { onSuccess: () => setName('') });
        }}
      >
        <Group align="flex-end">
          <TextInput label={t('banks.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('name')} w={260} />
          <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
            {label}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={create.error} onFields={['name']} />
      {create.data && typeof secret === 'string' && (
        <Alert color="yellow" title={`${create.data.name}: ${secretTitle}`}>
          <Code>{secret}</Code>
        </Alert>
      )}
    </>
  );
}
