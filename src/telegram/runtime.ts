import type { AppContext } from '../context.js';
import type { TelegramBot } from './bot.js';
import { startPoller } from './poller.js';
import { startSender } from './sender.js';

/** The path Telegram POSTs updates to when TELEGRAM_WEBHOOK_URL is set (that URL must reach it). */
export const WEBHOOK_PATH = '/telegram/v1/webhook';

/**
 * Starts the bot's background work on this instance: updates by webhook (every instance asks
 * Telegram for the same webhook; any of them answers it) or by long polling (one instance at a
 * time, src/telegram/poller.ts), and, where background work runs, the outbox sender.
 */
export async function startTelegram(ctx: AppContext, tg: TelegramBot, databaseUrl: string, runWorker: boolean): Promise<{ stop(): Promise<void> }> {
  const parts: { stop(): Promise<void> }[] = [];
  if (tg.config.webhookUrl) {
    try {
      await tg.bot.api.setWebhook(tg.config.webhookUrl, { secret_token: tg.webhookSecret, allowed_updates: ['message', 'callback_query'] });
      ctx.log.info({ url: tg.config.webhookUrl }, 'Telegram sends the bot’s updates to the webhook');
    } catch (err) {
      // The service runs without the bot's updates rather than not at all; the next start tries again.
      ctx.log.error({ err }, 'Telegram refused the webhook (setWebhook); the bot receives no updates until it is set');
    }
  } else if (runWorker) {
    parts.push(startPoller(ctx, tg, databaseUrl));
  }
  if (runWorker) parts.push(startSender(ctx, tg));
  return {
    async stop() {
      await Promise.all(parts.map((part) => part.stop()));
    },
  };
}
