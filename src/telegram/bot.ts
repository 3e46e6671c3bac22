import { Bot, type Context } from 'grammy';
import type { Update } from 'grammy/types';
import type { TelegramConfig } from '../config.js';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { hmacSha1Base64 } from '../lib/crypto.js';
import { takePayoutFromTelegram } from './take.js';
import { findActiveExecutorOf, findChatByChatId, type Language } from './telegram.repo.js';
import { linkByCode, unlinkChatFromBot } from './telegram.service.js';
import { takeAnswer } from './texts.js';

declare module '../context.js' {
  interface AppContext {
    /** The Telegram bot when TELEGRAM_BOT_TOKEN is set (src/telegram/bot.ts); undefined: the bot is off. */
    telegram?: TelegramBot;
  }
}

/**
 * What the bot's buttons do, when a caller (a test) hands in its own: `take:<payout_id>` takes a
 * payout for the chat's linked executor — by default takePayoutFromTelegram (take.ts: the
 * cabinet's take, once per executor and payout, so a second tap does nothing twice); what it
 * returns, a string, is shown to the person.
 */
export interface TelegramActions {
  takePayout?: (ctx: AppContext, executorId: string, payoutId: string, updateId: number) => Promise<unknown>;
}

/** A Bot API call waits this long at most (grammY's own default is 500 s). */
const API_TIMEOUT_SECONDS = 30;

/** The replies of the bot itself, in the person's language. */
const REPLIES: Record<Language, Record<'linked' | 'badCode' | 'noCode' | 'stopped' | 'notLinked' | 'done' | 'notYours' | 'failed', string>> = {
  ru: {
    linked: 'Готово: уведомления Kassir приходят сюда. Отключить: /stop или на экране Telegram в кабинете.',
    badCode: 'Код не подошёл: он уже использован, устарел (живёт 10 минут) или неверен. Создайте новый на экране Telegram в кабинете.',
    noCode: 'Чтобы получать уведомления Kassir, откройте кабинет, экран Telegram, и нажмите «Связать»: ссылка или QR-код откроют этот чат с кодом.',
    stopped: 'Чат отвязан: уведомления Kassir сюда больше не приходят.',
    notLinked: 'Этот чат ни с кем не связан.',
    done: 'Готово',
    notYours: 'Эта кнопка не для этого чата.',
    failed: 'Не получилось',
  },
  en: {
    linked: 'Done: Kassir notifications come here now. To stop: /stop, or the Telegram screen of your cabinet.',
    badCode: 'That code did not work: it was used, expired (codes last 10 minutes) or is wrong. Make a new one on the Telegram screen of your cabinet.',
    noCode: 'To get Kassir notifications, open your cabinet’s Telegram screen and press “Link”: its link or QR code opens this chat with a code.',
    stopped: 'This chat is unlinked: Kassir notifications no longer come here.',
    notLinked: 'This chat is not linked to anyone.',
    done: 'Done',
    notYours: 'This button is not for this chat.',
    failed: 'That did not work',
  },
};

/** Telegram's language of a person, as the bot can speak it (ru unless they use English). */
function languageOf(code: string | undefined): Language {
  return code?.toLowerCase().startsWith('en') ? 'en' : 'ru';
}

/**
 * The one bot of this service (grammY): its commands and buttons, its username (getMe, asked once),
 * and the secret Telegram sends with every webhook call. Updates reach `handle` from the poller
 * (one instance at a time) or from the webhook route; messages leave through the outbox sender.
 */
export class TelegramBot {
  readonly bot: Bot;
  /**
   * Telegram's secret_token for the webhook: derived from the bot token, so every instance
   * expects the same one without another setting, and nobody without the token can forge it.
   */
  readonly webhookSecret: string;
  /** Whether this instance is the one reading updates by long polling now (set by the poller; tests and logs). */
  polling = false;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly ctx: AppContext,
    readonly config: TelegramConfig,
    actions: TelegramActions = {},
  ) {
    this.bot = new Bot(config.token, { client: { apiRoot: config.apiRoot, timeoutSeconds: API_TIMEOUT_SECONDS } });
    this.webhookSecret = hmacSha1Base64(config.token, 'kassir telegram webhook').replace(/[^A-Za-z0-9]/g, '');
    this.install(actions);
  }

  /** The bot's username (getMe, asked once and kept; asked again after a failure). */
  async username(): Promise<string> {
    this.ready ??= this.bot.init().catch((err: unknown) => {
      this.ready = undefined;
      this.ctx.log.warn({ err }, 'Telegram did not answer getMe');
      throw new DomainError('UNAVAILABLE', 'Telegram does not answer right now; try again in a minute', undefined, { retryAfter: 30 });
    });
    await this.ready;
    return this.bot.botInfo.username;
  }

  /** Handles one update (from the poller or the webhook); a failure is logged, never thrown: the update is not retried. */
  async handle(update: Update): Promise<void> {
    try {
      await this.username();
      await this.bot.handleUpdate(update);
    } catch (err) {
      this.ctx.log.error({ err, update_id: update.update_id }, 'a Telegram update could not be handled');
    }
  }

  private install(actions: TelegramActions): void {
    const ctx = this.ctx;
    const bot = this.bot;
    // Only private chats: a code or a button in a group would link or act for whoever saw it.
    const privateChats = bot.chatType('private');

    privateChats.command('start', async (tg) => {
      const code = tg.match.trim();
      const spoken = languageOf(tg.from?.language_code);
      if (!code) {
        await tg.reply(REPLIES[spoken].noCode);
        return;
      }
      const outcome = await linkByCode(ctx, code, { id: tg.chat.id, username: tg.from?.username ?? null, language: spoken });
      if (outcome.linked) {
        ctx.log.info({ chat_id: tg.chat.id }, 'a Telegram chat was linked');
        await tg.reply(REPLIES[outcome.language].linked);
      } else {
        await tg.reply(REPLIES[spoken].badCode);
      }
    });

    privateChats.command('stop', async (tg) => {
      const gone = await unlinkChatFromBot(ctx, { chatId: tg.chat.id }, 'stop');
      await tg.reply(gone ? REPLIES[gone.language].stopped : REPLIES[languageOf(tg.from?.language_code)].notLinked);
    });

    // A tap on a button: acted on only for the person linked to the chat it came from; always
    // answered, so the person's button stops spinning whatever happened.
    bot.on('callback_query:data', async (tg) => {
      const chatId = tg.callbackQuery.message?.chat.id ?? tg.from.id;
      let text: string;
      try {
        text = await this.onButton(tg, chatId, actions);
      } catch (err) {
        text = err instanceof DomainError ? err.message : REPLIES[languageOf(tg.from.language_code)].failed;
        if (!(err instanceof DomainError)) ctx.log.error({ err, chat_id: chatId }, 'a Telegram button failed');
      }
      await tg.answerCallbackQuery({ text: text.slice(0, 200) });
    });
    // Any other button (no data) is still answered.
    bot.on('callback_query', (tg) => tg.answerCallbackQuery());
  }

  private async onButton(tg: Context, chatId: number, actions: TelegramActions): Promise<string> {
    const data = tg.callbackQuery?.data ?? '';
    const linked = await findChatByChatId(this.ctx.db, chatId);
    const language = linked?.language ?? languageOf(tg.from?.language_code);
    const take = /^take:([0-9a-f-]{36})$/i.exec(data);
    if (!take) return REPLIES[language].failed;
    // The button acts for the chat's linked executor, never for whoever's id is in the data.
    const executorId = linked ? await findActiveExecutorOf(this.ctx.db, linked.user_id) : undefined;
    if (!executorId) return REPLIES[language].notYours;
    if (actions.takePayout) {
      const result = await actions.takePayout(this.ctx, executorId, take[1]!, tg.update.update_id);
      return typeof result === 'string' ? result : REPLIES[language].done;
    }
    const { outcome } = await takePayoutFromTelegram(this.ctx, executorId, take[1]!, tg.update.update_id);
    return takeAnswer(outcome, language);
  }
}
