import { Button, Modal, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { useConfirmIdentity } from '../api/auth';
import { setConfirmer } from '../api/client';
import { useI18n } from '../i18n';
import { ErrorAlert } from './ErrorAlert';

/**
 * Risky actions (completing payouts and withdrawals, balance adjustments, keys, users) are answered
 * 403 AUTH_004 until the person confirms it is them; this dialog asks once, and the action is sent again.
 */
export function ConfirmIdentity() {
  const { t } = useI18n();
  const [method, setMethod] = useState<'otp' | 'password' | null>(null);
  const [value, setValue] = useState('');
  const resolver = useRef<((ok: boolean) => void) | null>(null);
  const confirm = useConfirmIdentity();

  useEffect(() => {
    setConfirmer(
      (wanted) =>
        new Promise<boolean>((resolve) => {
          resolver.current = resolve;
          setValue('');
          confirm.reset();
          setMethod(wanted);
        }),
    );
    return () => setConfirmer(null);
  }, [confirm.reset]);

  const close = (ok: boolean) => {
    resolver.current?.(ok);
    resolver.current = null;
    setMethod(null);
  };

  const submit = async () => {
    try {
      await confirm.mutateAsync(method === 'otp' ? { otp: value.trim() } : { password: value });
      close(true);
    } catch {
      // Shown below; the person may try again or cancel.
    }
  };

  return (
    <Modal opened={method !== null} onClose={() => close(false)} title={t('confirm.title')} centered>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <Stack>
          <Text size="sm">{method === 'otp' ? t('confirm.otp') : t('confirm.password')}</Text>
          {method === 'otp' ? (
            <TextInput
              label={t('login.otp')}
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              autoComplete="one-time-code"
              inputMode="numeric"
              data-autofocus
            />
          ) : (
            <PasswordInput
              label={t('login.password')}
              value={value}
              onChange={(e) => setValue(e.currentTarget.value)}
              autoComplete="current-password"
              data-autofocus
            />
          )}
          <ErrorAlert error={confirm.error} />
          <Button type="submit" loading={confirm.isPending}>
            {t('confirm.submit')}
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
