import { randomUUID } from 'node:crypto';
import { followAnnouncements } from '../db/listen.js';
import type { Db } from '../db/pool.js';
import type { SecretBox } from '../lib/crypto.js';
import type { Logger } from '../lib/logger.js';
import { activeBlockKinds, type BlockRow, findActiveBlock, findBlock } from './blocks.repo.js';
import { ClientChecks } from './client-checks.js';
import type { RiskHit } from './hits.repo.js';
import { type BlockKind, markHash } from './marks.js';
import { type Count, countWithin, type LimitRow, type LimitScope, listLimits, uncount, windowFigures } from './velocity.repo.js';

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
const APPLICATION_NAME = 'kassir risk announcements';

interface Snapshot {
  limits: ReadonlyMap<LimitScope, LimitRow>;
  kinds: ReadonlySet<BlockKind>;
  until: number;
}

/** An entry counted in a velocity window, to take back if the create it was counted for fails. */
export interface Counted {
  scope: LimitScope;
  key: string;
  id: string;
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
  /** The creates' client_id rules, taken together under load (src/risk/client-checks.ts). */
  private readonly clientChecks: ClientChecks;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {
    this.clientChecks = new ClientChecks(db);
  }

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
    const [limits, kinds] = await Promise.all([listLimits(this.db), activeBlockKinds(this.db)]);
    const snapshot: Snapshot = { limits: new Map(limits.map((l) => [l.scope, l])), kinds: new Set(kinds), until: Date.now() + MAX_AGE_MS };
    if (this.live && generation === this.generation) this.snapshot = snapshot;
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
   * The rules a payment create passes before it is tried (DESIGN.md "Risk rules (contract)"): its
   * client_id not blocked, here or everywhere, and within the client_id velocity limit. Counting
   * takes room in the window at once (exact under races); the caller gives it back with `uncount`
   * when the create then fails. Creates without a client_id are not counted.
   */
  async checkCreate(input: {
    merchantId: string;
    terminalId: string;
    clientId: string | null;
    amount: string;
    currency: string;
  }): Promise<{ refused?: Refused; counted?: Counted }> {
    if (input.clientId === null) return {};
    const { limits, kinds } = await this.rules();
    const limit = limits.get('client_id');
    const checkBlock = kinds.has('client_id');
    if (!limit && !checkBlock) return {};
    const about = { merchantId: input.merchantId, terminalId: input.terminalId, inputs: { client_id: input.clientId } };
    // One window per merchant, client_id and order currency: amounts add up in the currency they are in.
    const count: Count | undefined = limit && {
      scope: 'client_id',
      key: this.box.keyedHash('risk:velocity:client_id', `${input.merchantId}\0${input.clientId}\0${input.currency}`),
      amount: input.amount,
      id: randomUUID(),
      windowSeconds: limit.window_seconds,
      maxPayments: limit.max_payments,
      maxAmount: limit.max_amount,
    };
    // The block look-up and the count in one statement, shared with the creates checked at the
    // same moment: with rules on, a create pays a share of one statement and one commit.
    const checked = await this.clientChecks.check({
      block: checkBlock ? { hash: this.hash('client_id', input.clientId), merchantId: input.merchantId } : undefined,
      count,
    });
    if (checked.blockId) {
      // Nothing was counted for a blocked payer. (A block removed in between passes the create.)
      const block = await findBlock(this.db, checked.blockId);
      return block ? { refused: { hit: blockHit(block, about) } } : {};
    }
    if (!count || !limit) return {};
    if (checked.counted) return { counted: { scope: count.scope, key: count.key, id: count.id } };
    return { refused: await this.refusal(limit, count, input.currency, about) };
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
  ): Promise<{ counted?: Counted; refused?: Refused }> {
    const count: Count = {
      scope,
      key,
      amount,
      id: randomUUID(),
      windowSeconds: limit.window_seconds,
      maxPayments: limit.max_payments,
      maxAmount: limit.max_amount,
    };
    if (await countWithin(this.db, count)) return { counted: { scope, key, id: count.id } };
    return { refused: await this.refusal(limit, count, currency, about) };
  }

  /** The hit of a count past the limit; its figure read after the fact (one more statement, on the refusal only). */
  private async refusal(
    limit: LimitRow,
    { scope, key, amount }: Count,
    currency: string,
    about: Pick<RiskHit, 'merchantId' | 'terminalId' | 'paymentId'> & { inputs: Record<string, unknown> },
  ): Promise<Refused> {
    const now = await windowFigures(this.db, scope, key, limit.window_seconds);
    const count = now.count + 1;
    const sum = (Number(now.sum) + Number(amount)).toFixed(2);
    const byCount = limit.max_payments !== null && count > limit.max_payments;
    const figure = byCount
      ? `velocity ${scope} ${count} in ${limit.window_seconds} s > ${limit.max_payments}`
      : `velocity ${scope} amount ${sum} ${currency} in ${limit.window_seconds} s > ${Number(limit.max_amount).toFixed(2)}`;
    return {
      hit: {
        rule: 'velocity',
        action: 'refused',
        merchantId: about.merchantId,
        terminalId: about.terminalId,
        paymentId: about.paymentId ?? null,
        inputs: {
          ...about.inputs,
          window_seconds: limit.window_seconds,
          count,
          amount: sum,
          currency,
          max_payments: limit.max_payments,
          max_amount: limit.max_amount,
        },
        figure,
        at: new Date(),
      },
    };
  }

  /** Gives back an entry counted for a create that did not happen. */
  async uncount(counted: Counted): Promise<void> {
    try {
      await uncount(this.db, counted.scope, counted.key, counted.id);
    } catch (err) {
      // The create's own failure is what its caller must get; an entry not given back only
      // tightens the window until it leaves it.
      this.log.warn({ err }, 'could not give back a velocity entry of a failed create');
    }
  }
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
