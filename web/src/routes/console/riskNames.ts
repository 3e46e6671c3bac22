import { useI18n } from '../../i18n';

/** The names of rules, actions and block kinds in the person's language; an unknown one as the API names it. */
export function useRiskNames() {
  const { t, has } = useI18n();
  const named = (prefix: string, value: string) => {
    const key = `${prefix}.${value}`;
    return has(key) ? t(key) : value.replaceAll('_', ' ');
  };
  return {
    rule: (rule: string) => named('risk.rule', rule),
    action: (action: string) => named('risk.action', action),
    kind: (kind: string) => named('risk.kind', kind),
  };
}
