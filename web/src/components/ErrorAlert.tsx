import { Alert } from '@mantine/core';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';

/** An API failure as the person should read it: the server's message, which says what to do next. */
export function ErrorAlert({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  const forbidden = error instanceof ApiError && error.status === 403 && error.code === 'AUTH_003';
  const message = error instanceof Error ? error.message : String(error);
  return (
    <Alert color="red" role="alert" title={forbidden ? t('error.forbidden') : t('error.generic')}>
      {message}
    </Alert>
  );
}
