import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, patch, post, put } from './client';
import { useIdempotencyKey, useMoneyMutation } from './idempotency';
import type { StatementAbout } from './ledger';

// The executor's cabinet: every hook on the executor API (/executor/v1), which takes the
// executor's own session as it takes the executor's token.

export interface MyStatus {
  is_active: boolean;
  is_paused: boolean;
  devices_silent: boolean;
  takes_payments: boolean;
  /** Why the cards are not handed out (switched_off, dispute_ratio, paused, devices_silent, dispute_cap, dispute_uncovered). */
  why_not: string[];
  open_disputes: number;
  max_open_disputes: number;
}

export function useMyStatus() {
  return useQuery({ queryKey: ['cabinet', 'status'], queryFn: () => get<MyStatus>('/executor/v1/status'), refetchInterval: 15_000 });
}

export function useMyBalance() {
  return useQuery({
    queryKey: ['cabinet', 'balance'],
    queryFn: () => get<{ balance: number; balance_frozen: number; credit_limit: number; deposit_address: string | null }>('/executor/v1/balance'),
    refetchInterval: 15_000,
  });
}

/** Shift on (resume) or off (pause): while off, none of the executor's cards is handed out. */
export function useShift() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (on: boolean) => post<MyStatus>(on ? '/executor/v1/resume' : '/executor/v1/pause'),
    onSuccess: (status) => client.setQueryData(['cabinet', 'status'], status),
  });
}

interface PeriodUsage {
  amount: number;
  count: number;
}

export interface MyRequisite {
  id: string;
  type: string;
  value: string;
  bank: string | null;
  currency: string;
  methods: string[];
  min_amount: number;
  max_amount: number | null;
  is_active: boolean;
  disabled_reason: string | null;
  usage: { day: PeriodUsage; month: PeriodUsage };
  limits_in_force: { daily_turnover: number | null; monthly_turnover: number | null; daily_count: number | null; monthly_count: number | null };
}

export function useMyRequisites() {
  return useQuery({ queryKey: ['cabinet', 'requisites'], queryFn: () => get<{ requisites: MyRequisite[] }>('/executor/v1/requisites') });
}

export function useSwitchMyRequisite() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; is_active: boolean }) => patch<MyRequisite>(`/executor/v1/requisites/${input.id}`, { is_active: input.is_active }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['cabinet', 'requisites'] }),
  });
}

export interface Pending {
  id: string;
  requisite_id: string;
  amount: string;
  currency: string;
  valid_until: string;
  /** When the payer pressed "I paid": the executor checks the bank app. */
  payer_confirmed_at: string | null;
}

export function usePending() {
  return useQuery({ queryKey: ['cabinet', 'pending'], queryFn: () => get<{ payments: Pending[] }>('/executor/v1/payments/pending'), refetchInterval: 10_000 });
}

/** What the executor's cards received today: completed payments per currency. */
export function useReceivedToday() {
  return useQuery({
    queryKey: ['cabinet', 'received-today'],
    queryFn: () => get<{ received: { currency: string; amount: string; count: number }[] }>('/executor/v1/payments/received-today'),
    refetchInterval: 15_000,
  });
}

export interface MyMessage {
  id: string;
  text: string;
  sender: string | null;
  status: string;
  reason: string | null;
  amount: string | null;
  currency: string | null;
  digits: string | null;
  payment_id: string | null;
  created_at: string;
}

/** The phone's messages, by status (`waiting`: every one the executor still has to link or set aside); `total` counts them all. */
export function useMyMessages(status?: string) {
  return useQuery({
    queryKey: ['cabinet', 'messages', status],
    queryFn: () => get<{ messages: MyMessage[]; total: number }>('/executor/v1/device-messages', { status, limit: 100 }),
    refetchInterval: 10_000,
  });
}

/** A payment a waiting message may be for: the executor's own, of its amount; those on the card the text names first. */
export interface MessagePayment extends Pending {
  named_in_text: boolean;
}

export function useMessagePayments(messageId: string) {
  return useQuery({
    queryKey: ['cabinet', 'messages', messageId, 'payments'],
    queryFn: () => get<{ payments: MessagePayment[] }>(`/executor/v1/device-messages/${messageId}/payments`),
    refetchInterval: 10_000,
  });
}

export function useLinkMyMessage() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; paymentId: string }) => post<MyMessage>(`/executor/v1/device-messages/${input.id}/link`, { payment_id: input.paymentId }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['cabinet'] }),
  });
}

/** Set a waiting message aside with the reason (not a payment, or handled already): it leaves "To link". */
export function useSetAsideMyMessage() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; note: string }) => post<MyMessage>(`/executor/v1/device-messages/${input.id}/set-aside`, { note: input.note }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['cabinet'] }),
  });
}

export interface MyDevice {
  id: string;
  name: string;
  last_seen_at: string | null;
  battery: number | null;
  app_version: string | null;
}

export function useMyDevices() {
  return useQuery({ queryKey: ['cabinet', 'devices'], queryFn: () => get<{ devices: MyDevice[] }>('/executor/v1/devices'), refetchInterval: 30_000 });
}

export function useRegisterDevice() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => post<MyDevice & { token: string; signing_secret: string }>('/executor/v1/devices', { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['cabinet', 'devices'] }),
  });
}

export function useRevokeDevice() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<void>(`/executor/v1/devices/${id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['cabinet', 'devices'] }),
  });
}

export function useSetSilence() {
  return useMutation({ mutationFn: (minutes: number | null) => put('/executor/v1/device-silence', { minutes }) });
}

/** A payout no one has taken (its recipient masked), or one the executor took (everything needed to pay it). */
export interface CabinetPayout {
  id: string;
  amount: number;
  currency: string;
  method: string;
  requisites: string;
  bank: string;
  created_at: string;
  holder_name?: string;
  status?: string;
  taken_at?: string | null;
  completed_at?: string | null;
  has_proof?: boolean;
}

export function useMyPayouts() {
  return useQuery({
    queryKey: ['cabinet', 'payouts'],
    queryFn: () => get<{ available: CabinetPayout[]; taken: CabinetPayout[]; paid: CabinetPayout[] }>('/executor/v1/payouts'),
    refetchInterval: 10_000,
  });
}

/** Take a payout, report it done with the proof (a photo or PDF of the transfer), or report it failed. */
export function usePayoutAction() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (action: { id: string; take: true } | { id: string; proof: File } | { id: string; reason: string }) => {
      if ('take' in action) return post<CabinetPayout>(`/executor/v1/payouts/${action.id}/take`);
      if ('proof' in action) {
        const form = new FormData();
        form.append('proof', action.proof);
        return post<CabinetPayout>(`/executor/v1/payouts/${action.id}/complete`, form);
      }
      return post<CabinetPayout>(`/executor/v1/payouts/${action.id}/fail`, { reason: action.reason });
    },
    onSettled: () => client.invalidateQueries({ queryKey: ['cabinet'] }),
  });
}

export interface StatementEntry {
  id: string;
  created_at: string;
  kind: string;
  account: 'available' | 'frozen';
  amount: number;
  balance_after: number;
  ref_id: string | null;
  memo: string | null;
  about?: StatementAbout | null;
}

export function useMyStatement(limit: number) {
  return useQuery({
    queryKey: ['cabinet', 'statement', limit],
    queryFn: () => get<{ entries: StatementEntry[]; total: number }>('/executor/v1/statement', { limit }),
  });
}

export interface MyWithdrawal {
  id: string;
  amount: number;
  fee: number;
  address: string;
  tx_hash: string | null;
  status: string;
  created_at: string;
}

export function useMyWithdrawals() {
  return useQuery({ queryKey: ['cabinet', 'withdrawals'], queryFn: () => get<{ withdrawals: MyWithdrawal[] }>('/executor/v1/withdrawals', { limit: 50 }) });
}

/** Ask to withdraw USDT from the deposit; the key makes a retried request (a dropped connection) harmless. */
export function useRequestWithdrawal() {
  const client = useQueryClient();
  const key = useIdempotencyKey();
  return useMutation({
    mutationFn: (input: { amount: number; address: string }) => post<MyWithdrawal>('/executor/v1/withdrawals', input, key.headers()),
    onSuccess: () => {
      key.renew();
      return client.invalidateQueries({ queryKey: ['cabinet'] });
    },
  });
}

/** A dispute on one of the executor's payments (GET /executor/v1/disputes). */
export interface MyDispute {
  id: string;
  payment_id: string;
  status: 'awaiting_executor' | 'contested' | 'escalated' | 'approved' | 'rejected' | 'cancelled';
  amount: number;
  order_amount: number;
  currency: string;
  payer_amount: number;
  payer_currency: string;
  requisite: { id: string | null; type: string; value: string; bank: string | null };
  comment: string | null;
  receipt: { url: string; content_type: string | null } | null;
  opened_at: string;
  answer_due_at: string | null;
  support_due_at: string | null;
  hold: number;
  uncovered: boolean;
  answer: { kind: 'accepted' | 'contested'; amount: number | null; comment: string | null; file: boolean; at: string; late: boolean } | null;
  timed_out: string | null;
  decided_amount: number | null;
  decided_at: string | null;
  late_money: { notification_id: string; amount: number; text: string | null; received_at: string | null; created_at: string }[];
}

export function useMyDisputes() {
  return useQuery({
    queryKey: ['cabinet', 'disputes'],
    queryFn: () => get<{ disputes: MyDispute[] }>('/executor/v1/disputes', { limit: 100 }),
    refetchInterval: 15_000,
  });
}

/**
 * Accept a dispute (the money came: it moves money, so one Idempotency-Key per intended answer),
 * optionally with the amount received or the late bank message that was its money.
 */
export function useAcceptDispute() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; amount?: number; notificationId?: string }, headers) =>
      post<MyDispute>(
        `/executor/v1/disputes/${input.id}/accept`,
        input.notificationId ? { notification_id: input.notificationId } : input.amount !== undefined ? { amount: input.amount } : {},
        headers,
      ),
    { onSettled: () => client.invalidateQueries({ queryKey: ['cabinet'] }) },
  );
}

/** Contest a dispute (the money did not come): a comment and a photo of the bank's history. */
export function useContestDispute() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; comment: string; file: File | null }) => {
      const form = new FormData();
      form.append('comment', input.comment);
      if (input.file) form.append('file', input.file);
      return post<MyDispute>(`/executor/v1/disputes/${input.id}/contest`, form);
    },
    onSettled: () => client.invalidateQueries({ queryKey: ['cabinet'] }),
  });
}
