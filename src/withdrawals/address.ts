import bs58check from 'bs58check';

/**
 * A TRC-20 (Tron) address: base58check of 21 bytes whose first byte is the mainnet version 0x41
 * (so it starts with "T"); the 4-byte checksum must match. Returns the reason it is not one.
 */
export function tronAddressProblem(address: string): string | undefined {
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address)) return 'a TRC-20 address is 34 base58 characters starting with T';
  let bytes: Uint8Array;
  try {
    bytes = bs58check.decode(address);
  } catch {
    return 'the address checksum does not match (a character is wrong)';
  }
  if (bytes.length !== 21 || bytes[0] !== 0x41) return 'the address is not a Tron mainnet address (version byte 0x41)';
  return undefined;
}
