import { PARSER_TABLE } from './banks.js';
import { bankForSender, compileTable, normalize, type ParsedCredit, type ParseHint, parseWith } from './engine.js';
import { readPayerName, readReference } from './universal.js';

export type { ParsedCredit, ParseHint } from './engine.js';

/** Compiled once at start: a bad pattern in banks.ts fails here, naming itself. */
const TABLE = compileTable(PARSER_TABLE);

/**
 * Reads what a bank SMS or push says: an incoming transfer, an outgoing operation (purchase,
 * payment, transfer out, fee, withdrawal), or undefined when the text is refused (one-time
 * codes, declines, refunds, cashback, adverts, balance-only messages) or its format is unknown.
 * `hint.bank` (the requisite's bank) or `hint.sender` (the SMS sender id or app) picks whose
 * formats are tried first; every other bank's follow, then the generic shapes, then any wording
 * whose amount, direction and recipient are unambiguous. The sender, when given, names the bank
 * reported (an unknown sender: "unknown"); the recipient's digits are read wherever they stand.
 */
export function parseNotification(text: string, hint?: ParseHint): ParsedCredit | undefined {
  return parseWith(TABLE, text, hint);
}

/**
 * The incoming transfer in the text of a bank SMS or push notification, or undefined when the
 * text is anything else or cannot be read with certainty: a balance, a fee, a purchase or an
 * outgoing transfer is never returned as money received.
 */
export function parseIncomingCredit(text: string, hint?: ParseHint): ParsedCredit | undefined {
  const parsed = parseNotification(text, hint);
  return parsed?.direction === 'incoming' ? parsed : undefined;
}

/** The directory code of the bank an SMS sender id or app package/title belongs to. */
export function bankOfSender(sender: string): string | undefined {
  return bankForSender(TABLE, sender);
}

/** What a bank message says beside the money: evidence a person may need to look at. */
export interface MessageEvidence {
  /** The bank's reference for the transfer ("Номер операции 123456"), upper-cased, without hyphens. */
  reference?: string;
  /** The payer's name as the bank wrote it ("ИВАН И."). */
  payerName?: string;
}

/**
 * The evidence in a bank message's text (issue 36 item 4): its reference and its payer, the
 * payer read by the bank's own form when `parsed` has one. Read apart from parseIncomingCredit
 * so that what the parsers read of the money (and `npm run parsers:report`) is untouched by it.
 */
export function readEvidence(text: string, parsed?: { sender?: string }): MessageEvidence {
  const folded = normalize(text);
  if (!folded || folded.length > 4000) return {};
  const evidence: MessageEvidence = {};
  const reference = readReference(folded);
  if (reference) evidence.reference = reference;
  const payerName = parsed?.sender ?? readPayerName(folded);
  if (payerName) evidence.payerName = payerName;
  return evidence;
}
