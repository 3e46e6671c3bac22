import { isIP } from 'node:net';
import type { SecretBox } from '../lib/crypto.js';
import { maskCard, maskPhone } from '../lib/mask.js';
import { normalizeCard, normalizePhone } from '../lib/validators.js';

/** The marks a payer can be blocked by (migration 047). */
export const BLOCK_KINDS = ['client_id', 'card', 'phone', 'ip', 'device'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

/** A mark as it is compared (`normal`, never stored) and as a person reads it (`shown`). */
export interface Mark {
  kind: BlockKind;
  normal: string;
  shown: string;
}

/**
 * Normalises a mark so that the same payer always hashes alike, however it was written: a card
 * as its digits, a phone as E.164, an IP in its canonical form (IPv4-mapped IPv6 as IPv4, IPv6
 * lower-case and compressed), a client_id and a device fingerprint as sent. A string saying what
 * is wrong when the value is not one of its kind.
 */
export function readMark(kind: BlockKind, value: string): Mark | string {
  const trimmed = value.trim();
  if (trimmed === '') return `value must not be empty`;
  switch (kind) {
    case 'card': {
      const card = normalizeCard(trimmed);
      return card ? { kind, normal: card, shown: `${card.slice(0, 6)}…${card.slice(-4)}` } : 'a card must be 13–19 digits that pass the Luhn check';
    }
    case 'phone': {
      const phone = normalizePhone(trimmed);
      return phone ? { kind, normal: phone, shown: maskPhone(phone) } : 'a phone must be an international number, e.g. +79123456789';
    }
    case 'ip': {
      const ip = canonicalIp(trimmed);
      return ip ? { kind, normal: ip, shown: ip } : 'an ip must be an IPv4 or IPv6 address';
    }
    default:
      if (trimmed.length > 200) return `a ${kind} is at most 200 characters`;
      // client_id is compared exactly as the merchant sends it (spec: a string of the merchant's).
      return { kind, normal: kind === 'client_id' ? value : trimmed, shown: kind === 'client_id' ? value : trimmed };
  }
}

/** An IP address in one spelling, or undefined when it is none. */
export function canonicalIp(value: string): string | undefined {
  const text = value.trim().replace(/^\[|\]$/g, '');
  const family = isIP(text);
  if (family === 4)
    return text
      .split('.')
      .map((part) => String(Number(part)))
      .join('.');
  if (family !== 6) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  if (mapped) return canonicalIp(mapped[1]!);
  // The URL parser writes IPv6 in its canonical (RFC 5952) form.
  return new URL(`http://[${text}]/`).hostname.replace(/^\[|\]$/g, '');
}

/** The keyed hash a mark is stored and looked up by; the kind is part of it, so a phone never matches a client_id. */
export function markHash(box: SecretBox, kind: BlockKind, normal: string): string {
  return box.keyedHash(`risk:${kind}`, normal);
}

/** How a mark shows in a risk hit's inputs: a card or phone masked, the others as they are. */
export function shownForHit(kind: BlockKind, normal: string): string {
  if (kind === 'card') return maskCard(normal);
  if (kind === 'phone') return maskPhone(normal);
  return normal;
}
