import { useI18n } from '../i18n';

/** A moment as the API answered it (ISO 8601), shown in the person's language and time zone. */
export function When({ at }: { at: string | null | undefined }) {
  const { lang } = useI18n();
  if (!at) return <span>—</span>;
  const text = new Date(at).toLocaleString(lang === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'short', timeStyle: 'medium' });
  return <time dateTime={at}>{text}</time>;
}
