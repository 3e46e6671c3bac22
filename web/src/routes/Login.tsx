import { Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { type SignInInput, useChangeFirstPassword, useLogin } from '../api/auth';
import { ApiError } from '../api/client';
import { ErrorAlert } from '../components/ErrorAlert';
import { useI18n } from '../i18n';
import { LanguageSwitch } from './Shell';

/**
 * Email and password, then — when two-factor is on — the code, on the same form. `fixedEmail`: the
 * person signing in again after their session ended (SignInAgain), whose email is kept.
 */
export function SignInForm({
  signIn,
  pending,
  error,
  fixedEmail,
}: {
  signIn: (input: SignInInput) => Promise<unknown>;
  pending: boolean;
  error: unknown;
  fixedEmail?: string;
}) {
  const { t } = useI18n();
  const [email, setEmail] = useState(fixedEmail ?? '');
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const codeAsked = error instanceof ApiError && error.data?.otp_required === true;

  const submit = async () => {
    try {
      await signIn({ email, password, ...(needsCode ? { otp: otp.trim() } : {}) });
    } catch (err) {
      if (err instanceof ApiError && err.data?.otp_required) setNeedsCode(true);
    }
  };

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <Stack>
        <TextInput
          label={t('login.email')}
          type="email"
          autoComplete="username"
          required
          readOnly={fixedEmail !== undefined}
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
        />
        <PasswordInput
          label={t('login.password')}
          autoComplete="current-password"
          required
          data-autofocus
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
        {/* "A code is needed" is a step of the form, not an error. */}
        <ErrorAlert error={codeAsked ? null : error} />
        <Button type="submit" loading={pending}>
          {t('login.submit')}
        </Button>
      </Stack>
    </form>
  );
}

/** Sign-in, the whole page: no one is signed in. */
export function Login() {
  const { t } = useI18n();
  const login = useLogin();
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={380} maw="100%">
        <Stack>
          <Title order={2}>{t('login.title')}</Title>
          <SignInForm signIn={login.mutateAsync} pending={login.isPending} error={login.error} />
          <LanguageSwitch />
        </Stack>
      </Paper>
    </Center>
  );
}

/**
 * The first thing a person does who signed in with a password generated for them (a new sign-in,
 * an admin's reset): choose their own. The API refuses everything else until then (403 AUTH_006).
 */
export function ChooseOwnPassword() {
  const { t } = useI18n();
  const change = useChangeFirstPassword();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const mismatch = again !== '' && next !== again;
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={420} maw="100%">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (!mismatch && !change.isPending) change.mutate({ current_password: current, new_password: next });
          }}
        >
          <Stack>
            <Title order={2}>{t('login.changeTitle')}</Title>
            <Text size="sm">{t('login.changeNote')}</Text>
            <PasswordInput
              label={t('login.changeCurrent')}
              autoComplete="current-password"
              required
              value={current}
              onChange={(e) => setCurrent(e.currentTarget.value)}
            />
            <PasswordInput label={t('security.new')} autoComplete="new-password" required value={next} onChange={(e) => setNext(e.currentTarget.value)} />
            <PasswordInput
              label={t('login.changeRepeat')}
              autoComplete="new-password"
              required
              value={again}
              onChange={(e) => setAgain(e.currentTarget.value)}
              error={mismatch ? t('login.changeMismatch') : undefined}
            />
            <ErrorAlert error={change.error} />
            <Button type="submit" loading={change.isPending} disabled={mismatch}>
              {t('login.changeSubmit')}
            </Button>
            <LanguageSwitch />
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
