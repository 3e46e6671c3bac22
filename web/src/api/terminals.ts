import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, patch, post, put } from './client';

// A merchant's terminals as the operator sees them: creating one, its API key, its route.

export interface TerminalView {
  id: string;
  name: string;
  balance: number;
  balance_frozen: number;
  is_active: boolean;
  payment_currency: string;
  payin_rate: number;
  payout_rate: number;
  /** A test terminal (test mode): set at creation only. */
  is_test: boolean;
  /** Where the payment page sends the payer after a successful payment. */
  return_url: string | null;
  /** Where it sends a payer whose payment did not go through (expired, cancelled). */
  fail_url: string | null;
  /** The webhook address of the terminal's payments and payouts created without their own. */
  notify_url: string | null;
}

/** The terminal's addresses: webhooks and the payer's way back; null clears one. */
export interface TerminalUrls {
  notify_url?: string | null;
  return_url?: string | null;
  fail_url?: string | null;
}

export function useUpdateTerminalUrls() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...urls }: TerminalUrls & { id: string }) => patch<TerminalView>(`/admin/v1/terminals/${id}`, urls),
    onSuccess: () => client.invalidateQueries({ queryKey: ['merchants'] }),
  });
}

export function useRotateTerminalKey() {
  return useMutation({ mutationFn: (id: string) => post<{ api_key: string }>(`/admin/v1/terminals/${id}/api-key/rotate`) });
}

export function useCreateTerminal() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { merchantId: string; name: string; currency: string; payin_rate: number; payout_rate: number; is_test: boolean }) =>
      post<TerminalView & { api_key: string }>(`/admin/v1/merchants/${input.merchantId}/terminals`, {
        name: input.name,
        currency: input.currency,
        payin_rate: input.payin_rate,
        payout_rate: input.payout_rate,
        is_test: input.is_test,
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['merchants'] }),
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
