import { useBankDirectory } from '../api/banks';
import { useI18n } from '../i18n';
import { BANK_NAMES_EN } from '../i18n/banks';
import { groupCard } from '../i18n/format';

/**
 * What the API names by code, as a person names it in their language: a bank ("sberbank" →
 * "Сбербанк" / "Sberbank", from the directory), a payment method ("SBP" → "СБП"), a role, a
 * requisite's kind. An unknown code is shown as it is, never hidden.
 */
export function useNames() {
  const { t, has, lang } = useI18n();
  const directory = useBankDirectory();
  const byCode = new Map((directory.data?.banks ?? []).map((b) => [b.code, b.name]));
  const coded = (prefix: string, code: string | null | undefined): string => {
    if (!code) return '';
    const key = `${prefix}.${code}`;
    return has(key) ? t(key) : code;
  };
  return {
    bank: (code: string | null | undefined): string => {
      if (!code) return '';
      if (lang === 'en' && BANK_NAMES_EN[code]) return BANK_NAMES_EN[code]!;
      return byCode.get(code) ?? BANK_NAMES_EN[code] ?? code;
    },
    method: (code: string | null | undefined) => coded('method', code?.toUpperCase()),
    role: (code: string | null | undefined) => coded('role', code),
    requisiteType: (code: string | null | undefined) => coded('requisiteType', code),
    onOff: (on: boolean) => t(on ? 'common.on' : 'common.off'),
    /** A card or account number grouped in fours, masked ones too. */
    card: (value: string | null | undefined) => groupCard(value),
  };
}
