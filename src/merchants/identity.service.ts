import type { Db } from '../db/pool.js';
import { hashToken, type SecretBox } from '../lib/crypto.js';
import { type TerminalRoute, toTerminalRoute } from '../providers/providers.repo.js';
import { type RateQuote, toQuote } from '../rates/quote.js';
import type { IdentityCache } from './identity.cache.js';
import { findIdentityRow } from './merchants.repo.js';

declare module '../context.js' {
  interface AppContext {
    /** The merchant API's and the executor API's callers, kept between requests while no change can have been missed. */
    identities: IdentityCache;
  }
}

/**
 * Who is calling the merchant API: the terminal of the `X-Identity` key, its merchant, and what a
 * payment create needs of the terminal — read together, in one round trip, and kept in memory
 * (IdentityCache; migration 011 announces changes to every table this comes from).
 */
export interface MerchantIdentity {
  merchantId: string;
  terminalId: string;
  terminalName: string;
  /** The terminal's webhook address, for payments and payouts created without their own (null: none). */
  terminalNotifyUrl: string | null;
  terminalCurrency: string;
  terminalActive: boolean;
  /** A test terminal (migration 039): its payments and payouts touch no executor and no money. */
  terminalTest: boolean;
  payinRate: string;
  /** The merchant's currently valid secrets, opened (more than one during a rotation's grace period). */
  secrets: string[];
  /**
   * The USDT rate the terminal sees in each currency: its own setting where the operator made one,
   * else the currency's. A feed's rate carries when it goes stale: the create checks it at use.
   */
  rates: ReadonlyMap<string, RateQuote>;
  /** The terminal's routes in order (its executors, upstream providers). */
  routes: TerminalRoute[];
}

/** What finding an identity needs of the running service. */
export interface IdentitySources {
  db: Db;
  box: SecretBox;
  identities: IdentityCache;
}

/**
 * The identity of an API key, or undefined when no valid key has it; from memory when the cache
 * may serve it (see IdentityCache for when it does not), otherwise from the database.
 */
export async function findIdentity(sources: IdentitySources, apiKey: string): Promise<MerchantIdentity | undefined> {
  const keyHash = hashToken(apiKey);
  return sources.identities.get(keyHash.toString('base64'), async () => {
    const row = await findIdentityRow(sources.db, keyHash);
    if (!row) return undefined;
    const identity: MerchantIdentity = {
      merchantId: row.merchant_id,
      terminalId: row.terminal_id,
      terminalName: row.terminal_name,
      terminalNotifyUrl: row.terminal_notify_url,
      terminalCurrency: row.currency,
      terminalActive: row.is_active,
      terminalTest: row.is_test,
      payinRate: row.payin_rate,
      secrets: row.secrets.map((sealed) => sources.box.open(sealed)),
      rates: new Map(row.rates.map((r) => [r.currency, toQuote(r)])),
      routes: row.routes.map(toTerminalRoute),
    };
    return { value: identity, validUntil: row.valid_until };
  });
}
