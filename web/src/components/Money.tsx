import { useI18n } from '../i18n';

/**
 * Money as the API answered it (a decimal string or a JSON number), grouped for reading in the
 * person's language ("1 500,00 ₽" / "1,500.00 RUB"); never re-computed in the browser.
 */
export function Money({ value, currency }: { value: string | number | null | undefined; currency?: string }) {
  const { f } = useI18n();
  if (value === null || value === undefined) return <span>—</span>;
  return <span style={{ fontVariantNumeric: 'tabular-nums', whiteSpace: 'nowrap' }}>{f.money(value, currency)}</span>;
}
