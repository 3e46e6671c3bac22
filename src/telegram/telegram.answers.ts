import { Type } from 'typebox';

/*
 * What the routes of telegram.routes.ts answer on success, as the OpenAPI document shows them
 * (documentation only: test/answer-checks.ts checks every answer of the suite against them).
 */

export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** POST …/telegram/link */
export const TelegramLinkAnswer = Type.Object({
  code: Type.String({ description: 'the one-time code (good once, for 10 minutes); a newer code retires it' }),
  url: Type.String({ description: 'https://t.me/<bot>?start=<code>: opens the bot with the code' }),
  expires_at: Type.String({ format: 'date-time' }),
  qr_svg: Type.String({ description: 'the QR code of `url`, an SVG document' }),
});

/** GET …/telegram (and PATCH) */
export const TelegramStatusAnswer = Type.Object({
  configured: Type.Boolean({ description: 'the operator set TELEGRAM_BOT_TOKEN (false: nothing can be linked)' }),
  linked: Type.Boolean(),
  username: Type.Union([Type.String(), Type.Null()], { description: 'the linked chat’s Telegram username' }),
  linked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  language: Type.Union([Type.Literal('ru'), Type.Literal('en'), Type.Null()], { description: 'the language of the messages (null: no chat)' }),
  switches: Type.Array(Type.Object({ kind: Type.String(), enabled: Type.Boolean() }), {
    description: 'each kind of message the person can get; on until switched off',
  }),
  bot_username: Type.Union([Type.String(), Type.Null()]),
});
