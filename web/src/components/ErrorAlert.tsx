import { Alert } from '@mantine/core';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';
import { describeError, fieldErrorOf } from '../i18n/errors';

/**
 * An API failure as the person should read it, in their language: what went wrong (the code's
 * text) and what exactly (the field and the rule, or the server's sentence). An error about a field
 * listed in `onFields` is shown on that field instead (useFieldError), not a second time here.
 */
export function ErrorAlert({ error, onFields }: { error: unknown; onFields?: string[] }) {
  const { t, has, lang } = useI18n();
  if (!error) return null;
  const described = describeError(error, t, has, lang);
  if (described.field && onFields?.includes(described.field)) return null;
  const forbidden = error instanceof ApiError && error.status === 403 && error.code === 'AUTH_003';
  return (
    <Alert color="red" role="alert" title={forbidden ? t('error.forbidden') : described.title}>
      {described.message}
    </Alert>
  );
}

/** The error text to put ON a form field (Mantine's `error` prop) when the failure concerns it; nothing otherwise. */
export function useFieldError(error: unknown): (fields: string | string[]) => string | undefined {
  const { t, has, lang } = useI18n();
  return (fields) => fieldErrorOf(error, fields, t, has, lang);
}
