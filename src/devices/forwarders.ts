import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';

/**
 * The webhook formats of the Android forwarders executors already use, read into what a device
 * message is (docs/devices.md says how to set each one up). Each is verified by its own
 * signature, made with the device's signing secret; a message that fails is refused whole.
 */

/** What a forwarder's request says. */
export type ForwarderEvent =
  | { kind: 'message'; text: string; sender?: string; receivedAt?: string; stamp?: string }
  | { kind: 'ping'; battery?: number; appVersion?: string }
  | { kind: 'ignored'; why: string };

export interface HookRequest {
  raw: Buffer;
  form: boolean;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
}

const SMSFORWARDER_TOLERANCE_MS = 15 * 60_000;
const SMS_GATEWAY_TOLERANCE_S = 5 * 60;

function header(request: HookRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function badSignature(message: string): DomainError {
  return new DomainError('AUTH_002', message);
}

/** The body as fields: a JSON object, or a form. */
function fieldsOf(request: HookRequest): Record<string, unknown> {
  const text = request.raw.toString('utf8');
  if (request.form) return Object.fromEntries(new URLSearchParams(text));
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Answered below, in the spec's body.
  }
  throw new DomainError('VALIDATION', 'The body is not a JSON object: check the template in the forwarder (a quote in a title breaks it)');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

/** A `[receive_time]`-like date, or milliseconds since the epoch, as ISO 8601; undefined when unreadable. */
function isoOf(value: unknown): string | undefined {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{12,13}$/.test(value))) return new Date(Number(value)).toISOString();
  if (typeof value !== 'string') return undefined;
  // SimpleDateFormat's `Z` writes +0300; Date reads +03:00.
  const date = new Date(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * `pppscn/SmsForwarder`, its Webhook sender: a JSON template or a form with `from`, the original
 * text (`[org_content]`, or `content`), `title`, `received_at`, `timestamp` (ms) and `sign` =
 * base64(HMAC-SHA256(secret, timestamp + "\n" + secret)), URL-encoded once or more. The sign
 * covers no part of the body: the caller refuses a timestamp seen before with another body.
 */
export function readSmsForwarder(request: HookRequest, secret: string, now = Date.now()): ForwarderEvent {
  const fields = { ...request.query, ...fieldsOf(request) };
  const stamp = str(fields.timestamp);
  const signRaw = str(fields.sign);
  if (!stamp || !/^\d{13}$/.test(stamp) || !signRaw) {
    throw badSignature('Set the Secret in SmsForwarder\'s Webhook settings and send "timestamp":"[timestamp]","sign":"[sign]"');
  }
  if (Math.abs(now - Number(stamp)) > SMSFORWARDER_TOLERANCE_MS) throw badSignature("The timestamp is more than 15 minutes off: check the phone's clock");
  let sign = signRaw;
  for (let i = 0; i < 3 && /%[0-9A-Fa-f]{2}/.test(sign); i++) sign = decodeURIComponent(sign);
  const expected = createHmac('sha256', secret).update(`${stamp}\n${secret}`).digest('base64');
  if (!sameText(sign, expected)) throw badSignature("The sign does not match: paste this device's signing secret into the Secret field");
  const text = str(fields.text) ?? str(fields.org_content) ?? str(fields.content);
  if (!text) return { kind: 'ignored', why: 'no text in the request (use "text":"[org_content]")' };
  // For an app's notification `from` is the app's package (ru.sberbankmobile): the parsers know those too.
  const from = str(fields.from);
  return { kind: 'message', text, sender: from, receivedAt: isoOf(fields.received_at) ?? isoOf(stamp), stamp };
}

/**
 * `capcom6/android-sms-gateway` (SMS Gateway for Android): a JSON envelope `{id, event, payload,
 * deviceId, webhookId}`, `X-Signature` = hex HMAC-SHA256(signing key, raw body + X-Timestamp),
 * `X-Timestamp` in seconds, accepted within ±5 minutes. `sms:received` is a message,
 * `system:ping` a heartbeat (battery from its health checks), anything else is acknowledged.
 */
export function readSmsGateway(request: HookRequest, secret: string, now = Date.now()): ForwarderEvent {
  const stamp = header(request, 'x-timestamp');
  const signature = header(request, 'x-signature');
  if (!stamp || !/^\d{9,11}$/.test(stamp) || !signature || !/^[0-9a-f]{64}$/i.test(signature)) {
    throw badSignature('X-Timestamp and X-Signature are missing: update SMS Gateway for Android to a version that signs webhooks');
  }
  if (Math.abs(now / 1000 - Number(stamp)) > SMS_GATEWAY_TOLERANCE_S) throw badSignature("X-Timestamp is more than 5 minutes off: check the phone's clock");
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([request.raw, Buffer.from(stamp)]))
    .digest('hex');
  if (!sameText(signature.toLowerCase(), expected)) {
    throw badSignature("X-Signature does not match: set this device's signing secret as the app's Signing Key (Settings → Webhooks)");
  }
  const body = fieldsOf(request);
  const payload = (typeof body.payload === 'object' && body.payload !== null ? body.payload : {}) as Record<string, unknown>;
  if (body.event === 'system:ping') {
    const checks = ((payload.health as { checks?: Record<string, { observedValue?: unknown }> } | undefined)?.checks ?? {}) as Record<
      string,
      { observedValue?: unknown }
    >;
    const level = checks['battery:level']?.observedValue;
    const version = (payload.health as { version?: unknown } | undefined)?.version;
    return { kind: 'ping', battery: typeof level === 'number' && level >= 0 && level <= 100 ? level : undefined, appVersion: str(version) };
  }
  if (body.event !== 'sms:received') return { kind: 'ignored', why: `event ${String(body.event)} is not a received message` };
  const text = str(payload.message);
  if (!text) return { kind: 'ignored', why: 'the message is empty' };
  return { kind: 'message', text, sender: str(payload.sender) ?? str(payload.phoneNumber), receivedAt: isoOf(payload.receivedAt) };
}

/**
 * `bogkonstantin/android_income_sms_gateway_webhook` (Incoming SMS to URL forwarder): the user's
 * JSON template (`from`, `text`, `sentStamp`, `receivedStamp`, `sim`), `X-Signature` = hex
 * HMAC-SHA256(secret, raw body) with "Sign with HMAC-SHA-256" on. No timestamp is signed and the
 * app retries the identical body for hours, so repeats are told by the message itself (deduplicated).
 */
export function readIncomingSms(request: HookRequest, secret: string): ForwarderEvent {
  const signature = header(request, 'x-signature');
  if (!signature || !/^[0-9a-f]{64}$/i.test(signature)) {
    throw badSignature('X-Signature is missing: switch on "Sign with HMAC-SHA-256" in the rule and paste this device\'s signing secret');
  }
  const expected = createHmac('sha256', secret).update(request.raw).digest('hex');
  if (!sameText(signature.toLowerCase(), expected)) throw badSignature("X-Signature does not match: paste this device's signing secret into the rule");
  const fields = fieldsOf(request);
  const text = str(fields.text);
  if (!text) return { kind: 'ignored', why: 'no "text" in the template' };
  return { kind: 'message', text, sender: str(fields.from), receivedAt: isoOf(fields.sentStamp) ?? isoOf(fields.receivedStamp) };
}
