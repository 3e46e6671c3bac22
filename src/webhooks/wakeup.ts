import { createSubscriber } from '../db/listen.js';
import type { Logger } from '../lib/logger.js';
import { WEBHOOK_CHANNEL } from './outbox.js';

/** A dispatch is asked for at most this often: the events of one burst go out together. */
const THROTTLE_MS = 100;
/** How the listening connection shows in pg_stat_activity. */
const APPLICATION_NAME = 'kassir webhook announcements';

/**
 * Starts a dispatch when webhook events are written, on every instance that runs jobs: listens to
 * the announcements of migration 013 (sent when the writing transaction commits) and calls
 * `dispatch` — at once for the first, then at most every THROTTLE_MS, always once more after the
 * last announcement, so that no event waits for the next announcement or the minute's safety-net
 * dispatch. Announcements missed while the connection was down are made up for by one dispatch
 * when it is back.
 */
export async function wakeDispatchOnNewEvents(
  databaseUrl: string,
  log: Logger,
  dispatch: () => Promise<void>,
  /** Called when the connection is re-established after it was lost (the database is back). */
  onReconnected: () => void = () => undefined,
): Promise<{ stop(): Promise<void> }> {
  let timer: NodeJS.Timeout | undefined;
  let last = 0;
  let stopped = false;
  const ask = () => {
    if (timer || stopped) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        last = Date.now();
        dispatch().catch((err: unknown) => log.error({ err }, 'could not schedule a webhook dispatch; the next announcement or the minute’s dispatch will'));
      },
      Math.max(0, last + THROTTLE_MS - Date.now()),
    );
  };

  const subscriber = createSubscriber(databaseUrl, APPLICATION_NAME);
  let connected = false;
  subscriber.notifications.on(WEBHOOK_CHANNEL, ask);
  subscriber.events.on('reconnect', (attempt: number) => {
    if (attempt === 1) log.warn('lost the connection that announces webhook events; they go out with the minute’s dispatch until it is back');
  });
  subscriber.events.on('connected', () => {
    // Also emitted by the first connect: only a re-established connection has missed anything.
    if (!connected) return;
    log.info('webhook announcements are back');
    ask();
    onReconnected();
  });
  subscriber.events.on('error', (err: Error) => log.error({ err }, 'webhook announcements failed; events go out with the minute’s dispatch'));
  await subscriber.connect();
  await subscriber.listenTo(WEBHOOK_CHANNEL);
  connected = true;
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await subscriber.close().catch((err: unknown) => log.debug({ err }, 'closing the webhook announcement connection failed; it is dropped all the same'));
    },
  };
}
