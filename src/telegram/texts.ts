import type { Role } from '../lib/actor.js';

/*
 * The texts of the bot's messages (issue 37 item 2). This is the minimal renderer the outbox
 * worker needs; the full catalogue of kinds and their texts replaces it with the same exports.
 */

export type MessageLanguage = 'ru' | 'en';

/** An inline button under a message: `callbackData` comes back in the tap's callback query (`take:<payout_id>`). */
export interface MessageButton {
  text: string;
  callbackData: string;
}

/** A message as sent: plain text (no parse mode: data never becomes markup), buttons one per row. */
export interface RenderedMessage {
  text: string;
  buttons?: MessageButton[];
}

/** The kinds a person of each audience can be sent, each a switch on their screen (on until switched off). */
const KINDS: Record<'executor' | 'staff' | 'merchant', readonly string[]> = {
  executor: ['dispute_opened', 'payout_available', 'devices_silent', 'deposit_low', 'requisite_disabled'],
  staff: [
    'alert_rate_stale',
    'alert_ledger_check',
    'alert_webhook_failing',
    'alert_provider_breaker',
    'alert_disputes_overdue',
    'alert_conversion_low',
    'alert_executor_disabled',
  ],
  merchant: ['webhook_failing', 'withdrawal_sent'],
};

/** The switchable kinds of a person's role. */
export function messageKinds(role: Role): readonly string[] {
  return role === 'executor' ? KINDS.executor : role === 'merchant' ? KINDS.merchant : KINDS.staff;
}

/** The text (and buttons) of a message of `kind` made from `data`, in `language`. */
export function renderMessage(kind: string, data: Record<string, unknown>, language: MessageLanguage): RenderedMessage {
  const facts = Object.entries(data)
    .filter(([, value]) => value !== null && typeof value !== 'object')
    .map(([key, value]) => `${key}: ${String(value)}`);
  const title = language === 'ru' ? `Kassir: ${kind}` : `Kassir: ${kind}`;
  const text = [title, ...facts].join('\n');
  if (kind === 'payout_available' && typeof data.payout_id === 'string') {
    return { text, buttons: [{ text: language === 'ru' ? 'Взять' : 'Take', callbackData: `take:${data.payout_id}` }] };
  }
  return { text };
}
