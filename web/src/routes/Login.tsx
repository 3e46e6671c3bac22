import { Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useLogin } from '../api/auth';
import { ApiError } from '../api/client';
import { ErrorAlert } from '../components/ErrorAlert';
import { useI18n } from '../i18n';
import { LanguageSwitch } from './Shell';

/** Sign-in: email and password, then — when two-factor is on — the code, on the same form. */
export function Login() {
  const { t } = useI18n();
  const login = useLogin();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [needsCode, setNeedsCode] = useState(false);

  const submit = async () => {
    try {
      await login.mutateAsync({ email, password, ...(needsCode ? { otp: otp.trim() } : {}) });
    } catch (err) {
      if (err instanceof ApiError && err.data?.otp_required) {
        setNeedsCode(true);
        login.reset();
      }
    }
  };

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={380} maw="100%">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <Stack>
            <Title order={2}>{t('login.title')}</Title>
            <TextInput label={t('login.email')} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
            <PasswordInput
              label={t('login.password')}
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            {needsCode && (
              <TextInput
                label={t('login.otp')}
                description={t('login.otpHint')}
                autoComplete="one-time-code"
                inputMode="numeric"
                required
                autoFocus
                value={otp}
                onChange={(e) => setOtp(e.currentTarget.value)}
              />
            )}
            <ErrorAlert error={login.error} />
            <Button type="submit" loading={login.isPending}>
              {t('login.submit')}
            </Button>
            <LanguageSwitch />
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
