import pgListen, { type Subscriber } from 'pg-listen';

/** How often a listening connection is checked with a query: a dead one is found within this. */
const CONNECTION_CHECK_MS = 10_000;

/**
 * A connection of its own that LISTENs for announcements (NOTIFY) on `databaseUrl`, shown as
 * `applicationName` in pg_stat_activity. It is re-established for as long as it takes, at most
 * every 30 s, and checked every CONNECTION_CHECK_MS; the caller subscribes to its channels and to
 * its `reconnect`, `connected` and `error` events, then connects it.
 */
export function createSubscriber(databaseUrl: string, applicationName: string): Subscriber {
  // A CommonJS module whose function is its `default` export.
  return pgListen.default(
    { connectionString: databaseUrl, application_name: applicationName },
    {
      paranoidChecking: CONNECTION_CHECK_MS,
      // Retried for as long as it takes (0: no deadline), at most every 30 s.
      retryTimeout: 0,
      retryInterval: (attempt) => Math.min(30_000, 500 * 2 ** attempt),
      parse: (payload: string) => payload,
    },
  );
}
