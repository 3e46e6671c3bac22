import { useI18n } from '../i18n';

/** A moment as the API answered it (ISO 8601), in the language's one date-time format and the browser's time zone. */
export function When({ at }: { at: string | null | undefined }) {
  const { f } = useI18n();
  if (!at) return <span>—</span>;
  return <time dateTime={at}>{f.dateTime(at)}</time>;
}
