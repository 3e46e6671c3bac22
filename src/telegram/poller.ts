import { GrammyError } from 'grammy';
import pg from 'pg';
import type { AppContext } from '../context.js';
import type { TelegramBot } from './bot.js';

/**
 * The advisory lock whose holder is the one instance reading the bot's updates (Telegram answers
 * 409 to a second getUpdates, and two readers would each handle half the updates).
 */
export const POLL_LOCK_KEY = 7_370_617_347;
/** How the lock's connection shows in pg_stat_activity. */
export const POLL_APPLICATION_NAME = 'kassir telegram poller';
/** An instance without the lock tries for it this often: how soon another takes over from one that died. */
const LOCK_RETRY_MS = 1000;
/** getUpdates' long-poll, seconds (Telegram holds the request until an update comes or this runs out). */
const POLL_TIMEOUT_SECONDS = 25;
/** The wait after a failed getUpdates (Telegram or the network down, or a 409 from a poller that just died). */
const ERROR_PAUSE_MS = 2000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Long polling with one instance polling at a time: each instance tries for a PostgreSQL advisory
 * lock on a connection of its own; the holder deletes any webhook and reads updates while the
 * connection lives. A session-level lock dies with its connection, so when the polling instance
 * dies (or its connection does) another takes over within LOCK_RETRY_MS; the instance that lost
 * its connection stops polling at once, its request in flight aborted.
 */
export function startPoller(ctx: AppContext, tg: TelegramBot, databaseUrl: string): { stop(): Promise<void>; polling(): boolean } {
  const stopping = new AbortController();
  let polling = false;

  const holdLockAndPoll = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: POLL_APPLICATION_NAME, keepAlive: true });
    const lost = new AbortController();
    client.on('error', (err) => {
      ctx.log.warn({ err }, 'the Telegram poller lost its database connection; it stops polling');
      lost.abort();
    });
    client.on('end', () => lost.abort());
    try {
      await client.connect();
      while (!stopping.signal.aborted && !lost.signal.aborted) {
        const { rows } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1) AS held', [POLL_LOCK_KEY]);
        if (rows[0]?.held) break;
        await sleep(LOCK_RETRY_MS, AbortSignal.any([stopping.signal, lost.signal]));
      }
      if (stopping.signal.aborted || lost.signal.aborted) return;
      polling = true;
      tg.polling = true;
      ctx.log.info('this instance reads the Telegram bot’s updates (long polling)');
      await poll(ctx, tg, AbortSignal.any([stopping.signal, lost.signal]), lost.signal);
    } finally {
      polling = false;
      tg.polling = false;
      await client.end().catch(() => undefined);
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await holdLockAndPoll();
      } catch (err) {
        if (!stopping.signal.aborted) ctx.log.warn({ err }, 'the Telegram poller failed; it tries again');
      }
      await sleep(LOCK_RETRY_MS, stopping.signal);
    }
  })();

  return {
    polling: () => polling,
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}

/**
 * Reads and handles updates until `signal` aborts. Stopping while the lock is still held, the
 * updates handled are confirmed to Telegram first, so the next poller does not handle them again.
 */
async function poll(ctx: AppContext, tg: TelegramBot, signal: AbortSignal, lockLost: AbortSignal): Promise<void> {
  // A webhook left from an earlier configuration would make every getUpdates answer 409.
  // grammY types its signal with the abort-controller shim's class; Node's own is what it gets.
  const abort = signal as unknown as Parameters<typeof tg.bot.api.getUpdates>[1];
  await tg.bot.api.deleteWebhook({ drop_pending_updates: false }, abort);
  let offset = 0;
  while (!signal.aborted) {
    let updates: Awaited<ReturnType<typeof tg.bot.api.getUpdates>>;
    try {
      updates = await tg.bot.api.getUpdates({ offset, timeout: POLL_TIMEOUT_SECONDS, allowed_updates: ['message', 'callback_query'] }, abort);
    } catch (err) {
      if (signal.aborted) return;
      const conflict = err instanceof GrammyError && err.error_code === 409;
      ctx.log.warn({ err }, conflict ? 'Telegram says another getUpdates is running; waiting' : 'getUpdates failed; trying again');
      await sleep(ERROR_PAUSE_MS, signal);
      continue;
    }
    // Handled in order, one at a time, before the next getUpdates confirms them (offset).
    for (const update of updates) {
      await tg.handle(update);
      offset = update.update_id + 1;
    }
  }
  if (offset > 0 && !lockLost.aborted) {
    await tg.bot.api
      .getUpdates({ offset, timeout: 0, limit: 1 })
      .catch((err: unknown) => ctx.log.debug({ err }, 'the last Telegram updates could not be confirmed'));
  }
}
