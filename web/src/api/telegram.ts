import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Me } from './auth';
import { del, get, patch, post } from './client';

/**
 * Where a person links their own Telegram chat (DESIGN.md "Telegram (contract)"): the same four
 * routes under each kind of person's API — the executor's, the merchant's, and staff under
 * /auth/v1 (a person's own settings, like two-factor).
 */
export type TelegramBase = '/executor/v1' | '/merchant/v1' | '/auth/v1';

/** The API a signed-in person links their chat under. */
export function telegramBase(role: Me['user']['role']): TelegramBase {
  if (role === 'executor') return '/executor/v1';
  if (role === 'merchant') return '/merchant/v1';
  return '/auth/v1';
}

/** A one-time code: the deep link `https://t.me/<bot>?start=<code>`, its QR code as SVG, good until `expires_at`. */
export interface TelegramLinkCode {
  code: string;
  url: string;
  expires_at: string;
  qr_svg: string;
}

/** The person's chat, if linked, and what they are told: a switch per kind of message the server has for their role. */
export interface TelegramState {
  linked: boolean;
  username: string | null;
  linked_at: string | null;
  language: 'ru' | 'en' | null;
  switches: { kind: string; enabled: boolean }[];
  bot_username: string | null;
}

export interface TelegramChange {
  language?: 'ru' | 'en';
  switches?: Record<string, boolean>;
}

const key = (base: TelegramBase) => ['telegram', base] as const;

/**
 * The person's chat. While a code is shown (`watching`) it is asked again every 3 seconds, so the
 * screen turns to "linked" soon after the person sent /start to the bot; otherwise once. A bot
 * that is not configured answers an error, which is not worth asking again.
 */
export function useTelegram(base: TelegramBase, watching = false) {
  return useQuery({
    queryKey: key(base),
    queryFn: () => get<TelegramState>(`${base}/telegram`),
    refetchInterval: (query) => (watching && !query.state.data?.linked ? 3_000 : false),
    retry: false,
  });
}

/** A new one-time code (each press replaces the one shown; the server keeps each good once for 10 minutes). */
export function useTelegramCode(base: TelegramBase) {
  return useMutation({ mutationFn: () => post<TelegramLinkCode>(`${base}/telegram/link`) });
}

/** The language messages are written in, and switches turned on or off; the screen shows what the server answers. */
export function useTelegramChange(base: TelegramBase) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: TelegramChange) => patch<TelegramState | undefined>(`${base}/telegram`, change),
    onSuccess: (state) =>
      state && typeof state.linked === 'boolean' ? client.setQueryData(key(base), state) : client.invalidateQueries({ queryKey: key(base) }),
  });
}

/** Unlinks the chat: nothing more is sent to it until the person links again. */
export function useTelegramUnlink(base: TelegramBase) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => del<void>(`${base}/telegram`),
    onSuccess: () => client.invalidateQueries({ queryKey: key(base) }),
  });
}
