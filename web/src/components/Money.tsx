import { useI18n } from '../i18n';

/**
 * Money as the API answered it (a decimal string or a JSON number), grouped for reading in the
 * person's language; never re-computed in the browser.
 */
export function Money({ value, currency }: { value: string | number | null | undefined; currency?: string }) {
  const { lang } = useI18n();
  if (value === null || value === undefined) return <span>—</span>;
  const text = String(value);
  const [whole, fraction] = text.split('.');
  const sign = whole?.startsWith('-') ? '-' : '';
  const digits = (whole ?? '').replace('-', '');
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'ru' ? '\u00a0' : ',');
  const separator = lang === 'ru' ? ',' : '.';
  return (
    <span style={{ fontVariantNumeric: 'tabular-nums', whiteSpace: 'nowrap' }}>
      {sign}
      {grouped}
      {fraction ? `${separator}${fraction}` : ''}
      {currency ? ` ${currency}` : ''}
    </span>
  );
}
