import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { followAnnouncements } from '../db/listen.js';
import type { Db } from '../db/pool.js';
import type { SecretBox } from '../lib/crypto.js';
import type { Logger } from '../lib/logger.js';
import { activeBlockKinds, activeBlocksOf, type BlockRow, findActiveBlock } from './blocks.repo.js';
import type { RiskHit } from './hits.repo.js';
import { type BlockKind, markHash } from './marks.js';
import { type ClientLimit, type Count, countWithin, type LimitRow, type LimitScope, listLimits, windowFigures } from './velocity.repo.js';

declare module '../context.js' {
  interface AppContext {
    /** The risk rules: blocks and velocity limits, kept in memory between changes (src/risk/rules.ts). */
    risk: RiskRules;
  }
}

/** The channel migration 047 notifies on whenever risk_blocks or risk_limits change. */
export const RISK_CHANNEL = 'kassir_risk';
/** The longest the rules are served from memory (a block's expiry is read again within this). */
const MAX_AGE_MS = 30_000;
/**
 * The client_id blocks kept in memory at most: beyond this many (a list far longer than any
 * operator keeps by hand), each create looks its payer up in risk_blocks instead.
 */
const CLIENT_BLOCKS_IN_MEMORY = 100_000;
const APPLICATION_NAME = 'kassir risk announcements';

interface Snapshot {
  limits: ReadonlyMap<LimitScope, LimitRow>;
  kinds: ReadonlySet<BlockKind>;
  /**
   * The client_id blocks that held when read, by keyed hash, oldest first; undefined when the
   * snapshot is not kept (announcements down) or there are more than CLIENT_BLOCKS_IN_MEMORY.
   */
  clientBlocks: ReadonlyMap<string, readonly BlockRow[]> | undefined;
  until: number;
}

/** A rule's refusal: what to record (the hit), nothing of which reaches the merchant. */
export interface Refused {
  hit: RiskHit;
}

/**
 * The risk rules as every check reads them. The limits and which kinds of block exist are kept in
 * memory, so that a create with no limit set and no block of its kind costs no statement at all
 * (issue 36: "cheap enough that npm run bench with rules on keeps its ratio"). Served only while
 * it cannot be stale, as the merchant identities are (merchants/identity.cache.ts): every change
 * to risk_blocks or risk_limits is announced on commit (migration 047's triggers) and forgets the
 * snapshot; while the announcing connection is down, every check reads the database; and a
 * snapshot lives MAX_AGE_MS at most, so a block that expired stops costing its look-up.
 */
export class RiskRules {
  private snapshot: Snapshot | undefined;
  private generation = 0;
  private live = false;
  private announcements: { stop(): Promise<void> } | undefined;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  async start(databaseUrl: string): Promise<void> {
    this.announcements = await followAnnouncements(databaseUrl, {
      applicationName: APPLICATION_NAME,
      channel: RISK_CHANNEL,
      log: this.log,
      forget: () => this.forget(),
      setLive: (live) => {
        this.live = live;
      },
      said: {
        failed: 'risk rule announcements failed; reading the rules from the database on every check',
        closeFailed: 'closing the risk announcement connection failed',
      },
    });
  }

  async stop(): Promise<void> {
    await this.announcements?.stop();
    this.announcements = undefined;
    this.live = false;
    this.forget();
  }

  /** Forgets the snapshot (an announcement, or this instance's own change). */
  forget(): void {
    this.generation++;
    this.snapshot = undefined;
  }

  private async rules(): Promise<Snapshot> {
    if (this.live && this.snapshot && this.snapshot.until > Date.now()) return this.snapshot;
    const generation = this.generation;
    // The blocks themselves only for a snapshot that will be kept: read on every check, they would
    // cost more than the one look-up they save.
    const keep = this.live;
    const [limits, kinds, clientBlocks] = await Promise.all([
      listLimits(this.db),
      activeBlockKinds(this.db),
      keep ? activeBlocksOf(this.db, 'client_id', CLIENT_BLOCKS_IN_MEMORY) : undefined,
    ]);
    const snapshot: Snapshot = {
      limits: new Map(limits.map((l) => [l.scope, l])),
      kinds: new Set(kinds),
      clientBlocks: clientBlocks && byHash(clientBlocks),
      until: Date.now() + MAX_AGE_MS,
    };
    if (keep && this.live && generation === this.generation) this.snapshot = snapshot;
    return snapshot;
  }

  /** The keyed hash of a mark (blocks and velocity keys never hold the mark itself). */
  hash(kind: BlockKind, normal: string): string {
    return markHash(this.box, kind, normal);
  }

  /** The block that holds now for a mark of `kind`, here or everywhere; no statement when no block of the kind exists. */
  async blockFor(kind: BlockKind, normal: string, merchantId: string | null): Promise<BlockRow | undefined> {
    if (!(await this.rules()).kinds.has(kind)) return undefined;
    return findActiveBlock(this.db, kind, [this.hash(kind, normal)], merchantId);
  }

  /**
   * The rules a payment create passes (DESIGN.md "Risk rules (contract)"): its client_id not
   * blocked, here or everywhere — checked here, from memory while the snapshot is kept (no
   * statement at all) — and the client_id velocity limit it is then held to, which the create
   * counts in its own transaction under its payer's lock (payment_creation_facts, migration 057;
   * refused there, the caller records `clientLimitHit`). Creates without a client_id are neither
   * blocked nor counted.
   */
  async checkCreate(input: { merchantId: string; terminalId: string; clientId: string | null }): Promise<{ refused?: Refused; limit?: ClientLimit }> {
    if (input.clientId === null) return {};
    const rules = await this.rules();
    if (rules.kinds.has('client_id')) {
      const hash = this.hash('client_id', input.clientId);
      const block = rules.clientBlocks
        ? firstHolding(rules.clientBlocks.get(hash), input.merchantId)
        : await findActiveBlock(this.db, 'client_id', [hash], input.merchantId);
      if (block) {
        return { refused: { hit: blockHit(block, { merchantId: input.merchantId, terminalId: input.terminalId, inputs: { client_id: input.clientId } }) } };
      }
    }
    const limit = rules.limits.get('client_id');
    return limit ? { limit: { windowSeconds: limit.window_seconds, maxPayments: limit.max_payments, maxAmount: limit.max_amount } } : {};
  }

  /**
   * The hit of a create the client_id limit refused: `window` is what the payer's window held
   * before it (payment_creation_facts' client_count and client_sum).
   */
  clientLimitHit(
    limit: ClientLimit,
    window: { count: number; sum: string },
    create: { merchantId: string; terminalId: string; clientId: string; amount: string; currency: string },
  ): RiskHit {
    return velocityHit('client_id', limit, window, create.amount, create.currency, {
      merchantId: create.merchantId,
      terminalId: create.terminalId,
      inputs: { client_id: create.clientId },
    });
  }

  /**
   * Counts a payment page opened from `ip` in the IP velocity window (one window per IP, across
   * merchants: a payer's address is the same whoever it pays); undefined when no IP limit is set.
   */
  async countIp(input: { ip: string; amount: string; currency: string; merchantId: string; terminalId: string; paymentId: string }) {
    const limit = (await this.rules()).limits.get('ip');
    if (!limit) return {};
    const key = this.box.keyedHash('risk:velocity:ip', `${input.ip}\0${input.currency}`);
    return this.count(limit, key, input.amount, input.currency, 'ip', {
      merchantId: input.merchantId,
      terminalId: input.terminalId,
      paymentId: input.paymentId,
      inputs: { ip: input.ip },
    });
  }

  private async count(
    limit: LimitRow,
    key: string,
    amount: string,
    currency: string,
    scope: LimitScope,
    about: Pick<RiskHit, 'merchantId' | 'terminalId' | 'paymentId'> & { inputs: Record<string, unknown> },
  ): Promise<{ refused?: Refused }> {
    const count: Count = {
      scope,
      key,
      amount,
      id: randomUUID(),
      windowSeconds: limit.window_seconds,
      maxPayments: limit.max_payments,
      maxAmount: limit.max_amount,
    };
    if (await countWithin(this.db, count)) return {};
    // The figure read after the fact: one more statement, on the refusal only.
    const window = await windowFigures(this.db, scope, key, limit.window_seconds);
    const terms = { windowSeconds: limit.window_seconds, maxPayments: limit.max_payments, maxAmount: limit.max_amount };
    return { refused: { hit: velocityHit(scope, terms, window, amount, currency, about) } };
  }
}

/** The keyed hash's blocks, oldest first (as read). */
function byHash(blocks: readonly BlockRow[]): Map<string, BlockRow[]> {
  const map = new Map<string, BlockRow[]>();
  for (const block of blocks) {
    const same = map.get(block.value_hash);
    if (same) same.push(block);
    else map.set(block.value_hash, [block]);
  }
  return map;
}

/** The oldest of `blocks` that holds now for `merchantId` (its own or every merchant's), as findActiveBlock answers. */
function firstHolding(blocks: readonly BlockRow[] | undefined, merchantId: string): BlockRow | undefined {
  const now = Date.now();
  return blocks?.find((b) => (b.merchant_id === null || b.merchant_id === merchantId) && (b.expires_at === null || b.expires_at.getTime() > now));
}

/**
 * The hit of a create past a velocity limit: "velocity client_id 6 in 600 s > 5" (the window's
 * entries with this one), or by amount "velocity client_id amount 61000.00 RUB in 602 s > 60000.00".
 */
function velocityHit(
  scope: LimitScope,
  limit: ClientLimit,
  window: { count: number; sum: string },
  amount: string,
  currency: string,
  about: Pick<RiskHit, 'merchantId' | 'terminalId' | 'paymentId'> & { inputs: Record<string, unknown> },
): RiskHit {
  const count = window.count + 1;
  const sum = new Decimal(window.sum).plus(amount).toFixed(2);
  const byCount = limit.maxPayments !== null && count > limit.maxPayments;
  const figure = byCount
    ? `velocity ${scope} ${count} in ${limit.windowSeconds} s > ${limit.maxPayments}`
    : `velocity ${scope} amount ${sum} ${currency} in ${limit.windowSeconds} s > ${new Decimal(limit.maxAmount ?? 0).toFixed(2)}`;
  return {
    rule: 'velocity',
    action: 'refused',
    merchantId: about.merchantId,
    terminalId: about.terminalId,
    paymentId: about.paymentId ?? null,
    inputs: {
      ...about.inputs,
      window_seconds: limit.windowSeconds,
      count,
      amount: sum,
      currency,
      max_payments: limit.maxPayments,
      max_amount: limit.maxAmount,
    },
    figure,
    at: new Date(),
  };
}

/** The hit of a refusal by a block: "block client_id (block <id>): <reason>"; a card or phone only masked. */
export function blockHit(
  block: BlockRow,
  about: Pick<RiskHit, 'merchantId' | 'terminalId' | 'paymentId' | 'payoutId'> & { inputs: Record<string, unknown> },
): RiskHit {
  return {
    rule: 'block',
    action: 'refused',
    merchantId: about.merchantId,
    terminalId: about.terminalId ?? null,
    paymentId: about.paymentId ?? null,
    payoutId: about.payoutId ?? null,
    inputs: { kind: block.kind, block_id: block.id, ...about.inputs },
    figure: `block ${block.kind} (block ${block.id}): ${block.reason}`,
    at: new Date(),
  };
}
