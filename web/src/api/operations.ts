import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApiBase } from './area';
import { get, patch, post, put } from './client';
import { useMoneyMutation } from './idempotency';

// Executors and their requisites, merchants and terminals, rates, webhooks and the ledger check:
// the operator API's directory screens, one hook per route.

export interface ExecutorView {
  id: string;
  name: string;
  is_active: boolean;
  is_paused: boolean;
  priority: number;
  balance: number;
  balance_frozen: number;
  credit_limit: number;
  payin_reward: number;
  payout_reward: number;
  requisites?: number;
  created_at: string;
  /** How long its phones may be silent before its requisites leave the cascade (null: never). */
  device_silence_minutes: number | null;
  /** Its phones have been silent longer than that: its requisites are not handed out. */
  devices_silent: boolean;
}

export interface RequisiteView {
  id: string;
  type: string;
  value: string;
  bank: string | null;
  holder: string | null;
  currency: string;
  methods: string[];
  is_active: boolean;
  disabled_reason: string | null;
  last_used_at: string | null;
}

export function useExecutors() {
  return useQuery({ queryKey: ['executors'], queryFn: () => get<{ executors: ExecutorView[] }>('/admin/v1/executors') });
}

export function useExecutor(id: string) {
  return useQuery({ queryKey: ['executors', id], queryFn: () => get<ExecutorView & { requisites: RequisiteView[] }>(`/admin/v1/executors/${id}`) });
}

export function useSwitchRequisite() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; is_active: boolean }) => patch<RequisiteView>(`/admin/v1/requisites/${input.id}`, { is_active: input.is_active }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
}

/** Moves money: one Idempotency-Key per intended adjustment, one request at a time (useMoneyMutation). */
export function useAdjustExecutor() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; amount: number; reason: string }, headers) =>
      post<{ balance: number; balance_frozen: number }>(`/admin/v1/executors/${input.id}/adjustments`, { amount: input.amount, reason: input.reason }, headers),
    { onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }) },
  );
}

export interface MerchantView {
  id: string;
  name: string;
  terminals: number;
  created_at: string;
}

export interface TerminalView {
  id: string;
  name: string;
  balance: number;
  balance_frozen: number;
  is_active: boolean;
  payment_currency: string;
  payin_rate: number;
  payout_rate: number;
}

export function useMerchants() {
  return useQuery({ queryKey: ['merchants'], queryFn: () => get<{ merchants: MerchantView[] }>('/admin/v1/merchants') });
}

export function useMerchant(id: string) {
  return useQuery({ queryKey: ['merchants', id], queryFn: () => get<MerchantView & { terminals: TerminalView[] }>(`/admin/v1/merchants/${id}`) });
}

export function useRotateTerminalKey() {
  return useMutation({ mutationFn: (id: string) => post<{ api_key: string }>(`/admin/v1/terminals/${id}/api-key/rotate`) });
}

export interface WebhookView {
  id: string;
  resource_type: string;
  resource_id: string;
  event: string;
  url: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export function useWebhooks(filters: { status?: string; resource_id?: string; limit: number; offset: number }) {
  const base = useApiBase();
  return useQuery({
    queryKey: ['webhooks', base, filters],
    queryFn: () => get<{ webhooks: WebhookView[] }>(`${base}/webhooks`, filters),
    refetchInterval: 10_000,
  });
}

export interface WebhookAttempt {
  attempt: number;
  started_at: string;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  response_snippet: string | null;
}

/** One webhook event with its payload and every delivery attempt (fetched when the row is opened). */
export function useWebhook(id: string | undefined) {
  const base = useApiBase();
  return useQuery({
    queryKey: ['webhooks', 'one', id],
    queryFn: () => get<WebhookView & { payload: unknown; attempts: WebhookAttempt[] }>(`${base}/webhooks/${id}`),
    enabled: id !== undefined,
  });
}

export function useResendWebhook() {
  const client = useQueryClient();
  const base = useApiBase();
  return useMutation({
    mutationFn: (id: string) => post(`${base}/webhooks/${id}/resend`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['webhooks'] }),
  });
}

export function useLedgerCheck() {
  return useQuery({
    queryKey: ['ledger', 'check'],
    queryFn: () => get<{ ok: boolean; problems: { invariant: string; detail: string }[] }>('/admin/v1/ledger/check'),
  });
}

export interface BankView {
  code: string;
  name: string;
  country: string;
  kind: 'bank' | 'operator';
  is_active: boolean;
  operator_code: string | null;
}

export function useBanks() {
  return useQuery({ queryKey: ['banks'], queryFn: () => get<{ banks: BankView[] }>('/admin/v1/banks') });
}

export function useCreateBank() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { code: string; name: string; country: string; kind: 'bank' | 'operator' }) => post<BankView>('/admin/v1/banks', input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['banks'] }),
  });
}

export function useUpdateBank() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { code: string; is_active: boolean }) => patch<BankView>(`/admin/v1/banks/${input.code}`, { is_active: input.is_active }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['banks'] }),
  });
}

export interface ProviderView {
  id: string;
  name: string;
  kind: string;
  base_url: string;
  is_active: boolean;
  callback_url: string;
  breaker: { failures: number; open_until: string | null };
  created_at: string;
}

export function useProviders() {
  return useQuery({ queryKey: ['providers'], queryFn: () => get<{ providers: ProviderView[] }>('/admin/v1/providers') });
}

export function useCreateProvider() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; kind: string; base_url: string; api_key: string; secret_key: string }) =>
      post<{ id: string; callback_url: string }>('/admin/v1/providers', input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['providers'] }),
  });
}

export function useUpdateProvider() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; is_active: boolean }) => patch<ProviderView>(`/admin/v1/providers/${input.id}`, { is_active: input.is_active }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['providers'] }),
  });
}

/** One step of a terminal's route: its own executors, or a provider; optionally only for some currencies and methods. */
export interface RouteStep {
  executors?: boolean;
  provider_id?: string;
  currencies?: string[];
  methods?: string[];
}

export function useTerminalRoutes(terminalId: string) {
  return useQuery({ queryKey: ['routes', terminalId], queryFn: () => get<RouteStep[]>(`/admin/v1/terminals/${terminalId}/routes`) });
}

export function useSetTerminalRoutes() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { terminalId: string; routes: RouteStep[] }) => put<RouteStep[]>(`/admin/v1/terminals/${input.terminalId}/routes`, input.routes),
    onSuccess: (_data, input) => client.invalidateQueries({ queryKey: ['routes', input.terminalId] }),
  });
}

export function useCreateMerchant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => post<{ id: string; name: string; secret_key: string }>('/admin/v1/merchants', { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['merchants'] }),
  });
}

export function useCreateTerminal() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { merchantId: string; name: string; currency: string; payin_rate: number; payout_rate: number }) =>
      post<TerminalView & { api_key: string }>(`/admin/v1/merchants/${input.merchantId}/terminals`, {
        name: input.name,
        currency: input.currency,
        payin_rate: input.payin_rate,
        payout_rate: input.payout_rate,
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['merchants'] }),
  });
}

export function useCreateExecutor() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => post<{ id: string; name: string; token: string }>('/admin/v1/executors', { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
}
