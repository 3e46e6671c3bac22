import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from 'react';
import en from './en.json';
import ru from './ru.json';

/** The console's languages; every key exists in both (checked by the type below). */
const DICTIONARIES = { en, ru } satisfies Record<string, Record<keyof typeof en, string>>;
export type Lang = keyof typeof DICTIONARIES;
export type MessageKey = keyof typeof en;

interface I18n {
  lang: Lang;
  setLang(lang: Lang): void;
  t(key: MessageKey, values?: Record<string, string | number>): string;
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
        for (const [name, v] of Object.entries(values ?? {})) text = text.replace(`{${name}}`, String(v));
        return text;
      },
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
