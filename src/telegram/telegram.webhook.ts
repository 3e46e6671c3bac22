import type { Update } from 'grammy/types';
import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { constantTimeEqual } from '../lib/crypto.js';
import { WEBHOOK_PATH } from './runtime.js';

/**
 * Telegram's calls with the bot's updates when TELEGRAM_WEBHOOK_URL is set: each carries the
 * secret_token given to setWebhook in X-Telegram-Bot-Api-Secret-Token, compared in constant time;
 * anything else is 401. The update is handled before answering, so Telegram re-sends it should
 * this instance die meanwhile. Without a webhook configured the route does not exist.
 */
export async function telegramWebhookRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const tg = ctx.telegram;
  if (!tg?.config.webhookUrl) return;
  app.post(
    WEBHOOK_PATH,
    {
      schema: {
        hide: true,
        body: Type.Object({ update_id: Type.Integer() }, { additionalProperties: true }),
      },
    },
    async (request, reply) => {
      const sent = request.headers['x-telegram-bot-api-secret-token'];
      if (typeof sent !== 'string' || !constantTimeEqual(sent, tg.webhookSecret)) {
        throw new DomainError('AUTH_002', 'Not Telegram: the secret token is missing or wrong');
      }
      await tg.handle(request.body as Update);
      return reply.status(200).send({ ok: true });
    },
  );
}
