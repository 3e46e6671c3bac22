import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, patch, post } from './client';
import { useMoneyMutation } from './idempotency';

// Executors and their requisites, as the operator sees them (/admin/v1/executors, /admin/v1/requisites).

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
  /** Open disputes on its payments, and the cap at which its requisites are not handed out (issue 35). */
  open_disputes?: number;
  max_open_disputes?: number;
  /** Why its requisites are not handed out (dispute_cap, dispute_uncovered, dispute_ratio, …). */
  why_not?: string[];
  /** The payers' traffic classes its requisites take (null: every class). */
  traffic_classes?: string[] | null;
}

export interface RequisiteView {
  id: string;
  type: string;
  value: string;
  bank: string | null;
  holder: string | null;
  currency: string;
  country: string;
  methods: string[];
  min_amount: number;
  max_amount: number | null;
  is_active: boolean;
  daily_turnover_limit: number | null;
  monthly_turnover_limit: number | null;
  daily_count_limit: number | null;
  monthly_count_limit: number | null;
  disabled_reason: string | null;
  last_used_at: string | null;
  /** The payers' traffic classes it takes (null: every class); its executor's apply too. */
  traffic_classes?: string[] | null;
}

/** What the operator sends to add a requisite, or a part of it to change one (absent: kept; null: cleared). */
export interface RequisiteInput {
  type: string;
  value: string;
  bank: string | null;
  holder: string;
  currency: string;
  country: string;
  methods: string[];
  min_amount: number;
  max_amount: number | null;
  is_active: boolean;
  daily_turnover_limit: number | null;
  monthly_turnover_limit: number | null;
  daily_count_limit: number | null;
  monthly_count_limit: number | null;
  traffic_classes: string[] | null;
}

/** Adds a requisite to an executor; the server checks it as it checks the CLI's (a card's Luhn digit, a phone's format, an EMV payload). */
export function useCreateRequisite(executorId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: RequisiteInput) => post<RequisiteView>(`/admin/v1/executors/${executorId}/requisites`, input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
}

/** Changes a requisite: only the fields given. */
export function useUpdateRequisite() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...input }: Partial<RequisiteInput> & { id: string }) => patch<RequisiteView>(`/admin/v1/requisites/${id}`, input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
}

export function useExecutors() {
  return useQuery({ queryKey: ['executors'], queryFn: () => get<{ executors: ExecutorView[] }>('/admin/v1/executors') });
}

export function useExecutor(id: string) {
  return useQuery({ queryKey: ['executors', id], queryFn: () => get<ExecutorView & { requisites: RequisiteView[] }>(`/admin/v1/executors/${id}`) });
}

/** Changes an executor's settings: only the fields given. */
export function useUpdateExecutor() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...input }: { id: string; traffic_classes?: string[] | null }) => patch<ExecutorView>(`/admin/v1/executors/${id}`, input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
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

export function useCreateExecutor() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => post<{ id: string; name: string; token: string }>('/admin/v1/executors', { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
}
