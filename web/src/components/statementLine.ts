import type { StatementAbout } from '../api/ledger';
import { useI18n } from '../i18n';
import { useStatusName } from './StatusBadge';

/** A statement line as the ledger answers it (an executor's deposit, a terminal's balance). */
export interface StatementLine {
  kind: string;
  ref_id: string | null;
  memo: string | null;
  about?: StatementAbout | null;
}

/**
 * A statement line named as a person says it: what happened to the money ("Held for a payment")
 * and what it was about ("Платёж 1 500 ₽, заказ 1001, завершён" / "Payment 1,500 RUB, order 1001,
 * completed") instead of the posting's kind and a UUID.
 */
export function useStatementLine() {
  const { t, has, f } = useI18n();
  const { statusName } = useStatusName();
  return {
    /** The posting's kind in words; an unknown one as words, not a code. */
    action: (line: StatementLine): string => {
      const key = `ledger.${line.kind}`;
      return has(key) ? t(key) : line.kind.replaceAll('_', ' ');
    },
    /** The payment, payout or withdrawal it concerns, in a sentence; the memo when there is none. */
    about: (line: StatementLine): string => {
      const about = line.about;
      if (!about) return line.memo ?? '';
      const key = `statement.about.${about.type}`;
      const values = {
        // As a person says it: "1 500 ₽", not "1 500,00 ₽" (a whole amount's zero cents dropped, nothing else).
        amount: f.money(String(about.amount).replace(/\.0+$/, ''), about.currency),
        order: about.ext_id ?? '',
        status: statusName(about.status).toLocaleLowerCase(),
      };
      const text = has(key) ? t(key, values) : `${about.type} ${values.amount}, ${values.status}`;
      return line.memo ? `${text} · ${line.memo}` : text;
    },
  };
}
