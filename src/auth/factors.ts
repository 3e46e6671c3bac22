import { randomBytes, randomInt } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { generateSecret, generateURI, verify as verifyOtp } from 'otplib';
import QRCode from 'qrcode';
import { DomainError } from '../errors.js';
import { hashToken } from '../lib/crypto.js';

/** Shortest password a person may choose; generated ones are longer. */
export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 200;

/** Argon2id with the library's defaults (19 MiB, 2 passes: OWASP's recommendation). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** A hash of nothing anyone knows, verified against for an unknown email so that it takes as long. */
const DUMMY_HASH = hash(randomBytes(16).toString('hex'));

/** Checks a password against its hash, or against a dummy when there is no user, in the same time. */
export async function passwordMatches(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const matches = await verify(passwordHash ?? (await DUMMY_HASH), password);
  return passwordHash !== undefined && matches;
}

/** Refuses a password a person chose that is too short or too long, saying what is needed. */
export function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new DomainError('VALIDATION', `The password must be at least ${MIN_PASSWORD_LENGTH} characters long`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) throw new DomainError('VALIDATION', `The password must be at most ${MAX_PASSWORD_LENGTH} characters long`);
}

/** Letters and digits that cannot be mistaken for each other when read aloud or copied by hand. */
const READABLE = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function readable(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += READABLE[randomInt(READABLE.length)];
  return out;
}

/** A generated password, shown once: 20 readable characters (about 115 bits). */
export function generatePassword(): string {
  return readable(20);
}

/** Ten one-time recovery codes (`xxxxx-xxxxx`) and the hashes that are stored. */
export function generateRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: 10 }, () => `${readable(5)}-${readable(5)}`.toLowerCase());
  return { codes, hashes: codes.map(recoveryCodeHash) };
}

export function recoveryCodeHash(code: string): string {
  return hashToken(code.trim().toLowerCase()).toString('hex');
}

/** A recovery code as typed: `xxxxx-xxxxx`; a six-digit TOTP code is never one. */
export function looksLikeRecoveryCode(code: string): boolean {
  return /^[a-z0-9]{5}-[a-z0-9]{5}$/i.test(code.trim());
}

/** A new TOTP secret (base32, 160 bits) with its otpauth:// URI and the QR code of that URI as an SVG data URL. */
export async function newTotpEnrolment(email: string, issuer: string): Promise<{ secret: string; uri: string; qr: string }> {
  const secret = generateSecret();
  const uri = generateURI({ issuer, label: email, secret });
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, uri, qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/**
 * The RFC 6238 time step a six-digit code matches (30-second steps, one step of clock drift either
 * way), or undefined. Acceptance is the caller's (one step once: users.repo acceptTotpStep).
 */
export async function totpStep(secret: string, code: string): Promise<number | undefined> {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = await verifyOtp({ secret, token: code, epochTolerance: 30 });
  return result.valid ? (result as { timeStep: number }).timeStep : undefined;
}
