import { followAnnouncements } from '../db/listen.js';
import type { Logger } from '../lib/logger.js';

/** The channel migration 011 notifies on whenever a table the cached identities come from changes. */
export const IDENTITY_CHANNEL = 'kassir_identity';
/** The longest an identity is served from memory, whatever else happens. */
export const IDENTITY_MAX_AGE_MS = 30_000;
/** Identities kept at most; the oldest is forgotten first. */
const MAX_ENTRIES = 10_000;
/** How the listening connection shows in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'kassir identity announcements';

interface Entry {
  value: unknown;
  /** Date.now() after which the entry is no longer served. */
  until: number;
}

/** What a loader read: the value, and when it stops being valid by itself (a key's or secret's expiry). */
export interface Loaded<T> {
  value: T;
  validUntil: Date | null;
}

/**
 * The merchant API's and the executor API's callers, kept in memory between requests: one
 * database round trip less on every signed request, a large share of a create's cost, and on every
 * executor request, a reported transfer's among them (docs/performance.md). One cache and one
 * listening connection per instance for both; each caller's keys are its own (the executors'
 * begin with `executor:`), and each reads back what it stored.
 *
 * Served only while it cannot be stale:
 * - every change to a table an identity comes from is announced on commit, by any writer
 *   (migration 011's triggers; 058's for an executor's token, name and activity), on a
 *   connection this instance listens on; an announcement forgets every identity;
 * - while that connection is down or being re-established, nothing is served from memory (every
 *   request reads the database, as without the cache) and everything is forgotten once it is back,
 *   since announcements made meanwhile were missed;
 * - a read that was under way when an announcement arrived is not kept (it may have read the
 *   rows from before the change);
 * - an entry lasts until the earliest expiry of what it holds (the API key's, a secret's in its
 *   grace period), and never longer than IDENTITY_MAX_AGE_MS.
 * The operator API of this instance also forgets everything after each of its writes (admin
 * routes), so its own changes apply to the very next request without waiting for the
 * announcement; other instances see them as soon as the announcement arrives (milliseconds).
 */
export class IdentityCache {
  private readonly entries = new Map<string, Entry>();
  /** Moves on every forget, so that a read that overlapped one is not kept. */
  private generation = 0;
  /** True while the announcements are being received. */
  private live = false;
  private announcements: { stop(): Promise<void> } | undefined;

  constructor(private readonly log: Logger) {}

  /** Starts listening for changes on `databaseUrl`; the cache serves nothing until this has resolved. */
  async start(databaseUrl: string): Promise<void> {
    this.announcements = await followAnnouncements(databaseUrl, {
      applicationName: LISTENER_APPLICATION_NAME,
      channel: IDENTITY_CHANNEL,
      log: this.log,
      forget: () => this.forget(),
      setLive: (live) => {
        this.live = live;
      },
      said: {
        lost: 'lost the connection that announces identity changes; reading identities from the database until it is back',
        back: 'identity change announcements are back; identities are kept in memory again',
        failed: 'identity change announcements failed; reading identities from the database',
        closeFailed: 'closing the identity announcement connection failed; it is dropped all the same',
      },
    });
  }

  async stop(): Promise<void> {
    await this.announcements?.stop();
    this.announcements = undefined;
    this.live = false;
    this.forget();
  }

  /** Forgets every identity; reads under way when this is called are not kept either. */
  forget(): void {
    this.generation++;
    this.entries.clear();
  }

  /**
   * The value of `key`: from memory when it is there and may be served, otherwise from `load`
   * (undefined: there is none, and that is not remembered).
   */
  async get<T>(key: string, load: () => Promise<Loaded<T> | undefined>): Promise<T | undefined> {
    if (this.live) {
      const entry = this.entries.get(key);
      // What `load` of this key stored: a key is always read with the one loader of its kind.
      if (entry && entry.until > Date.now()) return entry.value as T;
      if (entry) this.entries.delete(key);
    }
    const generation = this.generation;
    const loaded = await load();
    if (loaded && this.live && generation === this.generation) {
      const until = Math.min(Date.now() + IDENTITY_MAX_AGE_MS, loaded.validUntil?.getTime() ?? Infinity);
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value: loaded.value, until });
    }
    return loaded?.value;
  }

  /** How many identities are held (tests, diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  /** Whether identities are being served from memory (tests, diagnostics). */
  get serving(): boolean {
    return this.live;
  }
}
