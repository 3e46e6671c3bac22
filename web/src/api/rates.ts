import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from './client';

// USDT rates per currency and per terminal (issue 31): typed, kept by an exchange feed, or a
// terminal's markup on the currency's figure; their refreshes and the adverts of the last fetch.

/** The exchanges a feed reads, as the API names them, with how people call them. */
export const SOURCES = [
  { value: 'bybit_p2p', label: 'Bybit P2P' },
  { value: 'binance_p2p', label: 'Binance P2P' },
  { value: 'htx_p2p', label: 'HTX P2P' },
  { value: 'rapira', label: 'Rapira' },
  { value: 'grinex', label: 'Grinex' },
] as const;

/** The currencies Kassir prices in USDT (src/lib/money.ts FIAT_CURRENCIES). */
export const RATE_CURRENCIES = ['RUB', 'KZT', 'AZN', 'TJS', 'UZS', 'KGS', 'AMD', 'GEL', 'VND'];

export function sourceLabel(source: string | null | undefined): string | undefined {
  if (!source) return undefined;
  return SOURCES.find((s) => s.value === source)?.label ?? source;
}

export type RateState = 'manual' | 'markup' | 'fresh' | 'stale' | 'waiting' | 'held';

export interface RateOptions {
  base_url?: string;
  pay_methods?: string[];
  amount?: number | string;
  side?: 'buy' | 'sell';
  ranks?: [number, number];
  min_orders?: number;
  min_completion_percent?: number;
  [key: string]: unknown;
}

/** A rate setting: the currency's own, or a terminal's (with terminal_id). */
export interface RateSetting {
  terminal_id?: string;
  currency: string;
  rate: number | null;
  source: string | null;
  markup_percent: number;
  updated_at: string;
  stale: boolean;
  mode: 'manual' | 'feed' | 'markup';
  state: RateState;
  figure: number | null;
  payout_markup_percent: number | null;
  refresh_seconds: number | null;
  max_age_seconds: number | null;
  max_spread_percent: number | null;
  max_jump_percent: number | null;
  options: RateOptions;
  cross_check: { source: string; options: RateOptions }[];
  fetched_at: string | null;
  age_seconds: number | null;
  refresh_id: string | null;
  failures: number;
  last_error: string | null;
  held: { refresh_id: string; rate: number | null; figure: number | null; at: string } | null;
}

export interface RateRefresh {
  id: string;
  at: string;
  kind: 'manual' | 'settings' | 'fetched' | 'held' | 'failed' | 'accepted' | 'kept';
  source: string | null;
  figure: number | null;
  rate: number | null;
  gave_rate: boolean;
  error: string | null;
  actor: string | null;
  markup_percent: number | null;
}

export interface SampleAdvert {
  price: string;
  available: string | null;
  min: string | null;
  max: string | null;
  pay_methods: string[];
  trader: { name: string; orders: number | null; completion_percent: number | null } | null;
  promoted: boolean;
  left_out?: string;
}

export interface SampleSource {
  source: string;
  figure?: string;
  error?: string;
  left_out?: boolean;
  used?: string[];
  adverts?: SampleAdvert[];
}

export interface RateHistory {
  rate: RateSetting;
  refreshes: RateRefresh[];
  last_sample: (RateRefresh & { sample: { sources?: SampleSource[] } | null }) | null;
}

/** A rate a terminal prices with now: its own, or the currency's (with its markup). */
export interface EffectiveRate {
  currency: string;
  rate: number | null;
  payout_rate: number | null;
  source: string | null;
  stale: boolean;
  refresh_id: string | null;
}

/** What `PUT …/rates/{currency}` takes: a typed rate, a feed, or (a terminal's) a markup on the currency's figure. */
export type RateBody =
  | { rate: number }
  | { markup_percent: number; payout_markup_percent?: number | null }
  | {
      source: string;
      markup_percent?: number;
      payout_markup_percent?: number | null;
      refresh_seconds?: number;
      max_age_seconds?: number;
      max_jump_percent?: number | null;
      max_spread_percent?: number;
      options?: RateOptions;
      cross_check?: { source: string; options?: RateOptions }[];
    };

/** Where a setting lives: the currency's own (no terminal) or a terminal's. */
export interface RateScope {
  terminalId?: string;
  currency: string;
}

/** The API path of a setting. */
export function ratePath(scope: RateScope): string {
  return scope.terminalId ? `/admin/v1/terminals/${scope.terminalId}/rates/${scope.currency}` : `/admin/v1/rates/${scope.currency}`;
}

/** Every rate query (the list, a terminal's, a history): a change refreshes them all. */
const RATES = ['rates'];

export function useRateSettings() {
  return useQuery({
    queryKey: [...RATES, 'list'],
    queryFn: () => get<{ rates: RateSetting[] }>('/admin/v1/rates'),
    refetchInterval: 5_000,
  });
}

export function useTerminalRates(terminalId: string) {
  return useQuery({
    queryKey: [...RATES, 'terminal', terminalId],
    queryFn: () => get<{ rates: (RateSetting & { terminal_id: string })[]; effective: EffectiveRate[] }>(`/admin/v1/terminals/${terminalId}/rates`),
    refetchInterval: 10_000,
  });
}

export function useRateHistory(scope: RateScope, enabled = true) {
  return useQuery({
    queryKey: [...RATES, 'history', scope.terminalId ?? null, scope.currency],
    queryFn: () => get<RateHistory>(`${ratePath(scope)}/history`, { hours: 24 }),
    refetchInterval: 5_000,
    enabled,
  });
}

function useRateChange<T>(fn: (input: T) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: fn, onSuccess: () => client.invalidateQueries({ queryKey: RATES }) });
}

export function useSaveRate() {
  return useRateChange((input: { scope: RateScope; body: RateBody }) => put<RateSetting>(ratePath(input.scope), input.body));
}

/** A terminal's own setting removed: the currency's rate applies again. */
export function useRemoveTerminalRate() {
  return useRateChange((scope: RateScope) => del<void>(ratePath(scope)));
}

export function useRefreshRate() {
  return useRateChange((scope: RateScope) => post<{ scheduled: boolean }>(`${ratePath(scope)}/refresh`));
}

/** A person decides a jump the feed held: accept the held rate, or keep the current one. */
export function useDecideHeld() {
  return useRateChange((input: { scope: RateScope; decision: 'accept' | 'keep' }) => post<RateSetting>(`${ratePath(input.scope)}/held/${input.decision}`));
}
