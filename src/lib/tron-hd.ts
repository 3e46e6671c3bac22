import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { HDKey } from '@scure/bip32';
import bs58check from 'bs58check';

/** The largest non-hardened BIP32 child index. */
export const MAX_DEPOSIT_INDEX = 2 ** 31 - 1;

/**
 * The problem with an operator's extended public key for deposit addresses, or undefined: it must
 * be a BIP32 xpub (the account key, by convention m/44'/195'/0'), never an extended private key.
 */
export function xpubProblem(xpub: string): string | undefined {
  if (xpub.startsWith('xprv'))
    return 'is an extended PRIVATE key: configure the account’s extended public key (xpub…) instead, and keep the private key offline';
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(xpub);
  } catch (err) {
    return `is not a BIP32 extended public key (${(err as Error).message})`;
  }
  if (key.privateKey) return 'holds a private key: configure the extended public key (xpub…) instead';
  return undefined;
}

/** The Tron mainnet address (base58check, "T…") of a secp256k1 public key (compressed or not). */
export function tronAddressOfPublicKey(publicKey: Uint8Array): string {
  const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  const hash = keccak_256(uncompressed.subarray(1));
  const payload = new Uint8Array(21);
  payload[0] = 0x41;
  payload.set(hash.subarray(12), 1);
  return bs58check.encode(payload);
}

/**
 * The TRC-20 deposit address number `index`: child 0/index of the account's extended public key
 * (so m/44'/195'/0'/0/index from the operator's seed, where the private key lives).
 */
export function deriveTronAddress(xpub: string, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > MAX_DEPOSIT_INDEX) throw new RangeError(`deposit index ${index} is out of range`);
  const child = HDKey.fromExtendedKey(xpub).deriveChild(0).deriveChild(index);
  if (!child.publicKey) throw new Error('the extended key gave no public key');
  return tronAddressOfPublicKey(child.publicKey);
}
