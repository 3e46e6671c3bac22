import { Button, Modal, Stack, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { type Me, meKey, useSignInAgain } from '../api/auth';
import { setReauthenticator } from '../api/client';
import { useI18n } from '../i18n';
import { SignInForm } from '../routes/Login';

/**
 * A session that ended (idle too long, ended elsewhere, the password reset) is answered 401
 * AUTH_001: this dialog asks the same person to sign in again over the screen they are on — which
 * stays mounted, with everything typed into it — and the request that found the session ended is
 * then sent again. "Sign out instead" goes to the sign-in page.
 */
export function SignInAgain() {
  const { t } = useI18n();
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const resolver = useRef<((ok: boolean) => void) | null>(null);
  const again = useSignInAgain();
  const email = client.getQueryData<Me | null>(meKey)?.user.email;

  useEffect(() => {
    setReauthenticator(
      () =>
        new Promise<boolean>((resolve) => {
          resolver.current = resolve;
          again.reset();
          setAttempt((n) => n + 1);
          setOpen(true);
        }),
    );
    return () => setReauthenticator(null);
  }, [again.reset]);

  const close = (ok: boolean) => {
    resolver.current?.(ok);
    resolver.current = null;
    setOpen(false);
  };

  return (
    <Modal opened={open} onClose={() => close(false)} title={t('login.title')} centered closeOnClickOutside={false}>
      <Stack>
        <Text size="sm" role="status">
          {t('login.sessionEnded')}
        </Text>
        <SignInForm
          key={attempt}
          fixedEmail={email}
          pending={again.isPending}
          error={again.error}
          signIn={async (input) => {
            await again.mutateAsync(input);
            close(true);
          }}
        />
        <Button variant="subtle" onClick={() => close(false)}>
          {t('login.signOutInstead')}
        </Button>
      </Stack>
    </Modal>
  );
}
