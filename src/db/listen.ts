import pgListen, { type Subscriber } from 'pg-listen';
import type { Logger } from '../lib/logger.js';
import { followingConfig, hostsFor } from './hosts.js';

/** How often a listening connection is checked with a query: a dead one is found within this. */
const CONNECTION_CHECK_MS = 10_000;
/**
 * The longest wait between two attempts to re-establish it. One connection attempt costs next to
 * nothing, while the wait is time after an outage during which identities are read from the
 * database on every request and new webhook events wait for the minute's dispatch: at 30 s, the
 * fault suite saw both come back 7.5 s after an 8 s database stop, when requests had recovered at once.
 */
const RECONNECT_MAX_MS = 2_000;

/**
 * A connection of its own that LISTENs for announcements (NOTIFY) on `databaseUrl`, shown as
 * `applicationName` in pg_stat_activity. It is re-established for as long as it takes, at most
 * every RECONNECT_MAX_MS, and checked every CONNECTION_CHECK_MS; the caller subscribes to its
 * channels and to its `reconnect`, `connected` and `error` events, then connects it.
 */
export function createSubscriber(databaseUrl: string, applicationName: string): Subscriber {
  // A CommonJS module whose function is its `default` export.
  // With several hosts (db/hosts.ts), each reconnection goes to the host that accepts writes now.
  const list = hostsFor(databaseUrl);
  const config = { ...(list ? followingConfig(list) : { connectionString: databaseUrl }), application_name: applicationName };
  return pgListen.default(config, {
    paranoidChecking: CONNECTION_CHECK_MS,
    // Retried for as long as it takes (0: no deadline), at most every RECONNECT_MAX_MS.
    retryTimeout: 0,
    retryInterval: (attempt) => Math.min(RECONNECT_MAX_MS, 250 * 2 ** attempt),
    parse: (payload: string) => payload,
  });
}

/** What followAnnouncements tells a cache, and what it logs for it. */
export interface AnnouncementFollower {
  applicationName: string;
  channel: string;
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
  /** Forget everything cached: a change was announced, or announcements may have been missed. */
  forget(): void;
  /** Whether announcements arrive now: while not, the cache must not keep what it reads. */
  setLive(live: boolean): void;
  said: { lost?: string; back?: string; failed: string; closeFailed: string };
}

/**
 * Keeps an in-memory cache true across instances: it forgets on every announcement on
 * `channel` (a NOTIFY from a trigger or from another instance's change), and while the listening
 * connection is away — when announcements could be missed — it is told it is not live, forgets,
 * and is told live again once the connection is back. Resolves once it listens.
 */
export async function followAnnouncements(databaseUrl: string, follower: AnnouncementFollower): Promise<{ stop(): Promise<void> }> {
  const subscriber = createSubscriber(databaseUrl, follower.applicationName);
  let listening = false;
  const away = () => {
    follower.setLive(false);
    follower.forget();
  };
  subscriber.notifications.on(follower.channel, () => follower.forget());
  subscriber.events.on('reconnect', (attempt: number) => {
    if (attempt === 1 && follower.said.lost) follower.log.warn(follower.said.lost);
    away();
  });
  subscriber.events.on('connected', () => {
    // Also emitted by the first connect, before LISTEN: only a re-established connection counts here.
    if (!listening) return;
    follower.forget();
    follower.setLive(true);
    if (follower.said.back) follower.log.info(follower.said.back);
  });
  subscriber.events.on('error', (err: Error) => {
    away();
    follower.log.error({ err }, follower.said.failed);
  });
  await subscriber.connect();
  await subscriber.listenTo(follower.channel);
  listening = true;
  follower.setLive(true);
  return {
    async stop() {
      listening = false;
      away();
      await subscriber.close().catch((err: unknown) => follower.log.debug({ err }, follower.said.closeFailed));
    },
  };
}
