/**
 * Masking of card and phone numbers wherever text may reach a log (DESIGN.md: cards keep the
 * first 6 and last 4 digits; phone numbers keep the country code and the last 2 digits).
 */

// 13–19 digits, optionally grouped by spaces or dashes: a card number (PAN).
const CARD = /(?<![\d])(\d[ -]?){12,18}\d(?![\d])/g;
// A phone number: optional +, 10–12 digits, optionally separated (+7 912 345-67-89, 89123456789).
const PHONE = /(?<![\w\d])\+?\d[\d ()-]{8,16}\d(?![\d])/g;

function digitsOf(text: string): string {
  return text.replace(/\D/g, '');
}

/** `4276 1234 5678 9012` → `427612******9012`. */
export function maskCard(value: string): string {
  const digits = digitsOf(value);
  if (digits.length < 13) return '*'.repeat(digits.length);
  return digits.slice(0, 6) + '*'.repeat(digits.length - 10) + digits.slice(-4);
}

/** `+79123456789` → `+7*********89`. */
export function maskPhone(value: string): string {
  const plus = value.trim().startsWith('+') ? '+' : '';
  const digits = digitsOf(value);
  if (digits.length < 4) return plus + '*'.repeat(digits.length);
  return plus + digits.slice(0, 1) + '*'.repeat(digits.length - 3) + digits.slice(-2);
}

// UUIDs (payment and request ids), date-times and 64-hex-digit hashes (a withdrawal's transaction
// hash) hold digit runs that look like card or phone numbers; masking them would garble the very
// ids an operator needs to trace a request or a transaction (the fault suite's logs showed tx
// hashes with a "card" starred out of their middle).
const NOT_SENSITIVE =
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9a-z])[0-9a-f]{64}(?![0-9a-z])|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?/gi;

// A Telegram bot token (`<bot id>:<35 characters>`), also inside a Bot API URL (`/bot<token>/`):
// whoever holds it is the bot. The bot id stays (it is public: the bot's user id).
const BOT_TOKEN = /(?<![A-Za-z0-9_-])(bot)?(\d{3,15}):[A-Za-z0-9_-]{20,}/g;

/** `123456:AAE…` → `123456:***`. */
export function maskBotTokens(text: string): string {
  return text.replace(BOT_TOKEN, (_match, prefix: string | undefined, id: string) => `${prefix ?? ''}${id}:***`);
}

/** Replaces every card-like and phone-like number, and every bot token, inside free text. */
export function maskSensitive(raw: string): string {
  const text = maskBotTokens(raw);
  let out = '';
  let from = 0;
  for (const kept of text.matchAll(NOT_SENSITIVE)) {
    out += maskNumbers(text.slice(from, kept.index)) + kept[0];
    from = kept.index + kept[0].length;
  }
  return out + maskNumbers(text.slice(from));
}

function maskNumbers(text: string): string {
  return text
    .replace(CARD, (match) => (digitsOf(match).length >= 13 ? maskCard(match) : match))
    .replace(PHONE, (match) => {
      const n = digitsOf(match).length;
      return n >= 10 && n <= 12 ? maskPhone(match) : match;
    });
}

/** Deep copy of a log record with every string masked. */
export function maskDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskSensitive(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, depth + 1));
  if (value instanceof Error) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = maskDeep(item, depth + 1);
  return out;
}

/**
 * A request URL for the log. A card may arrive percent- or form-encoded (`4111%201111…`,
 * `4111+1111…`), which the masker would not recognise; the URL is then logged decoded and
 * masked. A URL with nothing to mask is logged exactly as received.
 */
export function maskUrl(url: string, ...secretPathPrefixes: string[]): string {
  for (const prefix of secretPathPrefixes) url = maskPathSecret(url, prefix);
  const at = url.indexOf('?');
  // `+` means a space only in the query (form encoding); in a path it is a literal plus.
  const readable = at < 0 ? url : url.slice(0, at) + url.slice(at).replace(/\+/g, ' ');
  // Escape by escape, so one malformed `%` elsewhere in the URL cannot keep a card encoded.
  const decoded = readable.replace(/(?:%[0-9a-f]{2})+/gi, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return escapes;
    }
  });
  const masked = maskSensitive(decoded);
  return masked === decoded ? maskSensitive(url) : masked;
}

/**
 * The payment page's URL is its only credential (`<prefix>/<token>/…`): the log keeps the first
 * 6 characters of the token, enough to tell pages apart, never enough to open one.
 */
function maskPathSecret(url: string, prefix: string): string {
  if (!url.startsWith(`${prefix}/`)) return url;
  const rest = url.slice(prefix.length + 1);
  const end = rest.search(/[/?#]/);
  const segment = end < 0 ? rest : rest.slice(0, end);
  if (!/^[A-Za-z0-9_-]{20,}$/.test(segment)) return url;
  return `${prefix}/${segment.slice(0, 6)}***${end < 0 ? '' : rest.slice(end)}`;
}
