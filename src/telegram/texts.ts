import type { Role } from '../lib/actor.js';
import { maskSensitive } from '../lib/mask.js';
import { formatAmount } from '../pages/format.js';

/**
 * What each Telegram message says (issue 37 item 2), in Russian and English, made at sending from
 * the row's `data` (the outbox keeps the facts, not the words, so the person's language is the one
 * they have when it is sent). Telegram's HTML parse mode: every figure from `data` is escaped, and
 * any free text (an error, a URL) is masked as the log masks it, so no full card or phone number
 * is ever sent; amounts read as the payment page writes them (src/pages/format.ts).
 */

export type Language = 'ru' | 'en';

/** A message: its HTML text and, for some, inline buttons (callback data of at most 64 bytes). */
export interface RenderedMessage {
  text: string;
  buttons?: { text: string; data: string }[][];
}

/** The time zone deadlines are told in when the event named none (DISPUTE_TIMEZONE's default). */
const DEFAULT_TIMEZONE = 'Europe/Moscow';

/** `<`, `>`, `&` and `"` as Telegram's HTML mode wants them. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A value of `data` as safe text: masked, then escaped. */
function safe(value: unknown): string {
  if (value === null || value === undefined) return '';
  return escapeHtml(maskSensitive(String(value)));
}

/** An amount as the payment page writes it (`1 500,50 ₽` / `1,500.50 ₽`), escaped. */
function amount(value: unknown, currency: unknown, language: Language): string {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '0';
  return escapeHtml(formatAmount(text, typeof currency === 'string' ? currency : '', language).text);
}

/**
 * A deadline in the person's words: "до 14:30 (через 30 мин)" / "by 14:30 (in 30 min)", the clock
 * in `timezone`; past, "срок истёк" / "overdue".
 */
export function deadline(iso: unknown, timezone: unknown, language: Language, now: Date): string {
  const at = new Date(typeof iso === 'string' ? iso : Number.NaN);
  if (Number.isNaN(at.getTime())) return '';
  const zone = typeof timezone === 'string' && timezone ? timezone : DEFAULT_TIMEZONE;
  let clock: string;
  try {
    clock = new Intl.DateTimeFormat(language === 'ru' ? 'ru-RU' : 'en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: zone }).format(at);
  } catch {
    clock = new Intl.DateTimeFormat(language === 'ru' ? 'ru-RU' : 'en-GB', {
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone: DEFAULT_TIMEZONE,
    }).format(at);
  }
  const minutes = Math.ceil((at.getTime() - now.getTime()) / 60_000);
  if (minutes <= 0) return language === 'ru' ? `до ${clock} (срок истёк)` : `by ${clock} (overdue)`;
  const left = minutes < 60 ? `${minutes}` : `${Math.floor(minutes / 60)} ${language === 'ru' ? 'ч' : 'h'} ${minutes % 60}`;
  return language === 'ru' ? `до ${clock} (через ${left} мин)` : `by ${clock} (in ${left} min)`;
}

type Words = (data: Record<string, unknown>, language: Language, now: Date) => RenderedMessage;

/** Says one thing in the language: `{ ru, en }[language]`. */
const say = (language: Language, ru: string, en: string) => (language === 'ru' ? ru : en);

const METHOD: Record<string, { ru: string; en: string }> = {
  card: { ru: 'на карту', en: 'to a card' },
  sbp: { ru: 'по СБП', en: 'by SBP' },
};

const KINDS: Record<string, Words> = {
  dispute_opened: (d, l, now) => ({
    text: say(
      l,
      `⚖️ <b>Спор</b> по платежу на ${amount(d.amount, d.currency, l)}.\nОтветьте ${deadline(d.answer_due_at, d.timezone, l, now)}: примите или оспорьте его в кабинете, иначе решит правило терминала.`,
      `⚖️ <b>Dispute</b> on a payment of ${amount(d.amount, d.currency, l)}.\nAnswer ${deadline(d.answer_due_at, d.timezone, l, now)}: accept or contest it in the cabinet, or the terminal's rule decides.`,
    ),
  }),
  payout_available: (d, l) => {
    const method = METHOD[String(d.method)]?.[l] ?? '';
    const bank = d.bank ? ` · ${safe(d.bank)}` : '';
    return {
      text: say(
        l,
        `💸 <b>Выплата</b> ${amount(d.amount, d.currency, l)} ${method}${bank}: её можно взять.`,
        `💸 <b>Payout</b> of ${amount(d.amount, d.currency, l)} ${method}${bank}: you can take it.`,
      ),
      buttons: [[{ text: say(l, 'Взять', 'Take'), data: `take:${String(d.payout_id)}` }]],
    };
  },
  phone_silent: (d, l) => ({
    text: say(
      l,
      `📵 Ваши телефоны молчат дольше ${safe(d.minutes)} мин: карты не выдаются, пока один из телефонов не выйдет на связь.`,
      `📵 Your phones have been silent for over ${safe(d.minutes)} min: your cards are not handed out until one of them reports.`,
    ),
  }),
  deposit_low: (d, l) => ({
    text: say(
      l,
      `🪫 Депозит ${amount(d.balance, d.currency ?? 'USDT', l)} — ниже вашего порога ${amount(d.threshold, d.currency ?? 'USDT', l)}. Пополните его, чтобы получать платежи.`,
      `🪫 Your deposit of ${amount(d.balance, d.currency ?? 'USDT', l)} is below your line of ${amount(d.threshold, d.currency ?? 'USDT', l)}. Top it up to keep receiving payments.`,
    ),
  }),
  requisite_off: (d, l) => {
    const what = d.requisite ? ` ${safe(d.requisite)}` : '';
    const bank = d.bank ? ` (${safe(d.bank)})` : '';
    return {
      text: say(
        l,
        `⛔️ Реквизит${what}${bank} выключен: последние ${safe(d.streak)} выдач не оплачены. Проверьте счёт и включите его снова в кабинете.`,
        `⛔️ Requisite${what}${bank} switched off: its last ${safe(d.streak)} hand-outs went unpaid. Check the account, then switch it on again in the cabinet.`,
      ),
    };
  },
  webhook_failing: (d, l) => {
    const last = d.status ? `HTTP ${safe(d.status)}` : safe(d.error);
    return {
      text: say(
        l,
        `🔌 Ваш адрес вебхуков <code>${safe(d.url)}</code> не принимает уведомления: ${safe(d.failures)} неудачных попыток подряд${last ? ` (последняя: ${last})` : ''}. Мы повторяем их.`,
        `🔌 Your webhook endpoint <code>${safe(d.url)}</code> is not taking notifications: ${safe(d.failures)} failed attempts in a row${last ? ` (last: ${last})` : ''}. We keep retrying.`,
      ),
    };
  },
  withdrawal_sent: (d, l) => ({
    text: say(
      l,
      `✅ Вывод ${amount(d.amount, d.currency ?? 'USDT', l)} отправлен на <code>${safe(d.address)}</code>.\nХэш: <code>${safe(d.tx_hash)}</code>`,
      `✅ Withdrawal of ${amount(d.amount, d.currency ?? 'USDT', l)} sent to <code>${safe(d.address)}</code>.\nHash: <code>${safe(d.tx_hash)}</code>`,
    ),
  }),
  alert_rate_stale: (d, l) => {
    const where = d.terminal_id ? say(l, ` терминала ${safe(d.terminal_id)}`, ` of terminal ${safe(d.terminal_id)}`) : '';
    const why = [d.stale ? say(l, 'устарел', 'is stale') : '', d.held ? say(l, 'ждёт решения о скачке', 'holds a jump for a person') : '']
      .filter(Boolean)
      .join(say(l, ' и ', ' and '));
    return { text: say(l, `⚠️ Курс ${safe(d.currency)}${where} ${why}.`, `⚠️ The ${safe(d.currency)} rate${where} ${why}.`) };
  },
  alert_ledger: (d, l) => ({
    text: say(l, `🚨 Проверка журнала нашла проблемы: ${safe(d.problems)}.`, `🚨 The ledger check found problems: ${safe(d.problems)}.`),
  }),
  alert_webhooks: (d, l) => ({
    text: say(
      l,
      `🔌 Вебхуки мерчанта ${safe(d.merchant)} не доходят: ${safe(d.failures)} неудачных попыток подряд.`,
      `🔌 Webhooks of merchant ${safe(d.merchant)} are failing: ${safe(d.failures)} failed attempts in a row.`,
    ),
  }),
  alert_provider: (d, l) => ({
    text: say(
      l,
      `🔌 Провайдер ${safe(d.provider)} выведен из ротации: его автомат разомкнут.`,
      `🔌 Provider ${safe(d.provider)} is out of rotation: its circuit breaker is open.`,
    ),
  }),
  alert_disputes_overdue: (d, l) => ({
    text: say(l, `⏰ Просроченных споров: ${safe(d.count)}.`, `⏰ Disputes past their deadline: ${safe(d.count)}.`),
  }),
  alert_conversion: (d, l) => ({
    text: say(
      l,
      `📉 Конверсия ${safe(d.percent)} % за ${safe(d.window_minutes)} мин (${safe(d.completed)} из ${safe(d.ended)}) — ниже ${safe(d.min_percent)} %.`,
      `📉 Conversion ${safe(d.percent)} % over ${safe(d.window_minutes)} min (${safe(d.completed)} of ${safe(d.ended)}) is below ${safe(d.min_percent)} %.`,
    ),
  }),
  alert_executor_off: (d, l) => {
    const reason = d.reason === 'dispute_ratio' ? say(l, 'слишком много споров за 7 дней', 'too many disputes in 7 days') : safe(d.reason);
    return {
      text: say(l, `⛔️ Трейдер ${safe(d.executor)} выключен правилом: ${reason}.`, `⛔️ Trader ${safe(d.executor)} was switched off by a rule: ${reason}.`),
    };
  },
};

/** Every kind a message may be (what a person's switches list). */
export const MESSAGE_KINDS: readonly string[] = Object.keys(KINDS);

/**
 * The text (and buttons) of one outbox message in the person's language; `now` is when it is
 * sent (deadlines are told as time left). An unknown kind still says something rather than nothing.
 */
export function renderMessage(kind: string, data: Record<string, unknown>, language: Language, now: Date = new Date()): RenderedMessage {
  const words = KINDS[kind];
  if (words) return words(data, language, now);
  return { text: say(language, `Уведомление: ${safe(kind)}`, `Notification: ${safe(kind)}`) };
}

/** What the chat is told after a Take button (takePayoutFromTelegram's outcome). */
export function takeAnswer(outcome: 'taken' | 'already_yours' | 'taken_by_other' | 'not_available', language: Language): string {
  const words: Record<typeof outcome, [ru: string, en: string]> = {
    taken: ['✅ Выплата ваша: реквизиты получателя — в кабинете.', '✅ The payout is yours: the recipient’s details are in the cabinet.'],
    already_yours: ['Эта выплата уже ваша.', 'This payout is already yours.'],
    taken_by_other: ['Эту выплату уже взял другой трейдер.', 'Another trader has already taken this payout.'],
    not_available: ['Эту выплату взять нельзя.', 'This payout cannot be taken.'],
  };
  return language === 'ru' ? words[outcome][0] : words[outcome][1];
}

/** The kinds each audience can be sent: each is a switch on the person's screen (on until switched off). */
const AUDIENCE_KINDS: Record<'executor' | 'staff' | 'merchant', readonly string[]> = {
  executor: ['dispute_opened', 'payout_available', 'phone_silent', 'deposit_low', 'requisite_off', 'withdrawal_sent'],
  staff: ['alert_rate_stale', 'alert_ledger', 'alert_webhooks', 'alert_provider', 'alert_disputes_overdue', 'alert_conversion', 'alert_executor_off'],
  merchant: ['webhook_failing', 'withdrawal_sent'],
};

/** The switchable kinds of a person's role. */
export function messageKinds(role: Role): readonly string[] {
  return role === 'executor' ? AUDIENCE_KINDS.executor : role === 'merchant' ? AUDIENCE_KINDS.merchant : AUDIENCE_KINDS.staff;
}
