import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';
import { useIdempotencyKey, useMoneyMutation } from './idempotency';

// The merchant cabinet: every hook on the merchant's own API (/merchant/v1), under the person's
// session; the shared screens (payments, webhooks) read their API from the area (api/area.tsx).

export interface MerchantTerminal {
  id: string;
  name: string;
  balance: number;
  balance_frozen: number;
  withdrawal_fee: number;
  currency: 'USDT';
  is_active: boolean;
  /** A test terminal: its payments and payouts move no money (test mode). */
  is_test: boolean;
}

export interface MerchantMe {
  merchant: { id: string; name: string };
  /** Where the signed merchant API is reached: signatures cover this URL. */
  api_base_url: string;
  terminals: MerchantTerminal[];
}

export function useMerchantMe() {
  return useQuery({ queryKey: ['merchant', 'me'], queryFn: () => get<MerchantMe>('/merchant/v1/me'), refetchInterval: 30_000 });
}

export interface MerchantPayout {
  id: string;
  ext_id: string;
  amount: number;
  currency: string;
  method: string;
  requisites: string;
  holder_name: string;
  bank: string;
  status: string;
  created_at: string;
  completed_at: string | null;
  terminal_id: string;
  failure_reason: string | null;
  is_test: boolean;
}

export function useMerchantPayouts(filters: { status?: string; limit: number; offset: number }) {
  return useQuery({
    queryKey: ['merchant', 'payouts', filters],
    queryFn: () => get<{ payouts: MerchantPayout[]; total: number }>('/merchant/v1/payouts', filters),
  });
}

export interface MerchantWithdrawal {
  id: string;
  amount: number;
  fee: number;
  address: string;
  tx_hash: string | null;
  status: string;
  created_at: string;
  terminal_id: string;
}

export function useMerchantWithdrawals() {
  return useQuery({
    queryKey: ['merchant', 'withdrawals'],
    queryFn: () => get<{ withdrawals: MerchantWithdrawal[] }>('/merchant/v1/withdrawals', { limit: 50 }),
  });
}

/** Money moves (a withdrawal, a transfer between terminals): balances and lists are read again after. */
export function useMerchantWithdraw() {
  const client = useQueryClient();
  const key = useIdempotencyKey();
  return useMutation({
    mutationFn: (input: { terminal_id: string; amount: number; address: string }) => post<MerchantWithdrawal>('/merchant/v1/withdrawals', input, key.headers()),
    onSuccess: () => {
      key.renew();
      return client.invalidateQueries({ queryKey: ['merchant'] });
    },
  });
}

export function useMerchantTransfer() {
  const client = useQueryClient();
  const key = useIdempotencyKey();
  return useMutation({
    mutationFn: (input: { from_terminal_id: string; to_terminal_id: string; amount: number }) => post('/merchant/v1/transfers', input, key.headers()),
    onSuccess: () => {
      key.renew();
      return client.invalidateQueries({ queryKey: ['merchant'] });
    },
  });
}

export function useRotateApiKey() {
  return useMutation({
    mutationFn: (input: { terminalId: string; graceSeconds: number }) =>
      post<{ id: string; api_key: string; previous_valid_until: string }>(`/merchant/v1/terminals/${input.terminalId}/api-key/rotate`, {
        grace_seconds: input.graceSeconds,
      }),
  });
}

export function useRotateSecret() {
  return useMutation({
    mutationFn: (graceSeconds: number) =>
      post<{ id: string; secret_key: string; previous_valid_until: string }>('/merchant/v1/secret-key/rotate', { grace_seconds: graceSeconds }),
  });
}

/** Test mode: what the cabinet does to a test payment on a click (the API refuses it for a live one). */
export type TestPaymentAction = 'complete' | 'expire' | 'dispute/approve' | 'dispute/reject';

/** A click on a test payment goes through its one lifecycle and sends the merchant's webhook: sent once per intended click. */
export function useTestPaymentAction() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; action: TestPaymentAction }, headers) =>
      post<{ id: string; status: string }>(`/merchant/v1/payments/${input.id}/test/${input.action}`, {}, headers),
    { onSettled: () => client.invalidateQueries({ queryKey: ['payments'] }) },
  );
}

export interface NewDispute {
  id: string;
  amount?: number;
  comment?: string;
  receipt?: File | null;
}

/** Opens a dispute on a cancelled payment, with the receipt file as the merchant API takes it (multipart: the fields as JSON in `data`). */
export function useOpenDispute() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: NewDispute, headers) => {
      const fields = { ...(input.amount ? { amount: input.amount } : {}), ...(input.comment ? { comment: input.comment } : {}) };
      if (!input.receipt) return post(`/merchant/v1/payments/${input.id}/dispute`, fields, headers);
      const form = new FormData();
      form.append('data', JSON.stringify(fields));
      form.append('receipt', input.receipt);
      return post(`/merchant/v1/payments/${input.id}/dispute`, form, headers);
    },
    { onSettled: () => client.invalidateQueries({ queryKey: ['payments'] }) },
  );
}

export interface NewPayout {
  terminal_id: string;
  ext_id: string;
  amount: number;
  method: 'card' | 'sbp';
  requisites: string;
  holder_name: string;
  bank?: string;
  notify_url?: string;
}

/** Creates a payout through one of the merchant's terminals: its value is reserved, so it is sent once per intended payout. */
export function useCreatePayout() {
  const client = useQueryClient();
  return useMoneyMutation((input: NewPayout, headers) => post<MerchantPayout>('/merchant/v1/payouts', input, headers), {
    onSuccess: () => client.invalidateQueries({ queryKey: ['merchant'] }),
  });
}

/** Test mode: completes or fails a test payout on a click (its payout.* webhook goes out). */
export function useTestPayoutAction() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; event: 'complete' | 'fail' }, headers) => post<MerchantPayout>(`/merchant/v1/payouts/${input.id}/test/${input.event}`, {}, headers),
    { onSettled: () => client.invalidateQueries({ queryKey: ['merchant'] }) },
  );
}
