import pgListen, { type Subscriber } from 'pg-listen';
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
