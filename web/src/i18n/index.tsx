import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import en from './en.json';
import * as format from './format';
import ru from './ru.json';

/** The console's languages; every key exists in both (checked by the type below). */
const DICTIONARIES = { en, ru } satisfies Record<string, Record<keyof typeof en, string>>;
export type Lang = keyof typeof DICTIONARIES;
export type MessageKey = keyof typeof en;

interface I18n {
  lang: Lang;
  setLang(lang: Lang): void;
  t(key: MessageKey, values?: Record<string, string | number>): string;
  /** True when the language has this key (for keys made from API values: a status, an error code, a posting's kind). */
  has(key: string): key is MessageKey;
  /** The formats of the language (./format.ts), the only ones screens use. */
  f: Formats;
}

/** ./format.ts bound to the person's language. */
export interface Formats {
  dateTime(at: string | Date | null | undefined): string;
  date(at: string | Date | null | undefined): string;
  time(at: string | Date, seconds?: boolean): string;
  duration(seconds: number | null | undefined): string;
  percent(value: number | string | null | undefined, options?: { fraction?: boolean; digits?: number; sign?: boolean }): string;
  number(value: number | string | null | undefined): string;
  money(value: number | string | null | undefined, currency?: string): string;
  card(value: string | null | undefined): string;
  zone(): string;
}

function formatsFor(lang: Lang): Formats {
  return {
    dateTime: (at) => format.formatDateTime(at, lang),
    date: (at) => format.formatDate(at, lang),
    time: (at, seconds) => format.formatTime(at, lang, seconds),
    duration: (seconds) => format.formatDuration(seconds, lang),
    percent: (value, options) => format.formatPercent(value, lang, options),
    number: (value) => format.formatNumber(value, lang),
    money: (value, currency) => format.formatMoney(value, currency, lang),
    card: (value) => format.groupCard(value),
    zone: () => format.timeZoneLabel(lang),
  };
}

const I18nContext = createContext<I18n | null>(null);

function initialLang(): Lang {
  const stored = localStorage.getItem('kassir.lang');
  if (stored === 'en' || stored === 'ru') return stored;
  return navigator.language.toLowerCase().startsWith('ru') ? 'ru' : 'en';
}

export function I18nProvider({ children }: { children: ReactNode }) {
  const [lang, setLangState] = useState<Lang>(initialLang);
  const setLang = useCallback((next: Lang) => {
    localStorage.setItem('kassir.lang', next);
    document.documentElement.lang = next;
    setLangState(next);
  }, []);
  const value = useMemo<I18n>(
    () => ({
      lang,
      setLang,
      t: (key, values) => {
        let text: string = DICTIONARIES[lang][key] ?? key;
        for (const [name, v] of Object.entries(values ?? {})) text = text.replaceAll(`{${name}}`, String(v));
        return text;
      },
      has: (key): key is MessageKey => Object.hasOwn(DICTIONARIES[lang], key),
      f: formatsFor(lang),
    }),
    [lang, setLang],
  );
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
