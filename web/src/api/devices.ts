import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from './client';
import { useMoneyMutation } from './idempotency';

// Executors' phones and the bank messages they forwarded, as the operator sees them
// (src/devices/devices.admin.ts).

export interface DeviceView {
  id: string;
  name: string;
  created_at: string;
  last_seen_at: string | null;
  battery: number | null;
  app_version: string | null;
}

/** What the phone forwarded: `ambiguous`, `unreadable` and `unmatched` wait for a person. */
export type DeviceMessageStatus = 'matched' | 'unmatched' | 'ambiguous' | 'unreadable' | 'ignored' | 'resolved';

export interface DeviceMessageView {
  id: string;
  device_id: string;
  executor_id: string;
  text: string;
  sender: string | null;
  received_at: string | null;
  status: DeviceMessageStatus;
  reason: string | null;
  amount: string | null;
  currency: string | null;
  digits: string | null;
  requisite_id: string | null;
  notification_id: string | null;
  payment_id: string | null;
  resolved_note: string | null;
  created_at: string;
}

export function useDevices(executorId: string) {
  return useQuery({
    queryKey: ['devices', executorId],
    queryFn: () => get<{ devices: DeviceView[] }>(`/admin/v1/executors/${executorId}/devices`),
    refetchInterval: 30_000,
  });
}

/** The forwarder apps a phone can post through (docs/devices.md), by the format in their webhook address. */
export const FORWARDER_APPS = [
  { format: 'smsforwarder', label: 'devices.app.smsforwarder' },
  { format: 'sms-gateway', label: 'devices.app.smsGateway' },
  { format: 'incoming-sms', label: 'devices.app.incomingSms' },
] as const;
export type ForwarderFormat = (typeof FORWARDER_APPS)[number]['format'];

/** Registers a phone (admin): its token and signing secret are answered this once, with each forwarder app's address. */
export function useRegisterDevice(executorId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) =>
      post<DeviceView & { token: string; signing_secret: string; forwarder_urls: Record<ForwarderFormat, string> }>(
        `/admin/v1/executors/${executorId}/devices`,
        { name },
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['devices', executorId] }),
  });
}

export function useRevokeDevice(executorId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (deviceId: string) => del<void>(`/admin/v1/executors/${executorId}/devices/${deviceId}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['devices', executorId] }),
  });
}

/** How long the executor's phones may be silent before its requisites leave the cascade (null: never). */
export function useSetDeviceSilence(executorId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (minutes: number | null) => put<{ device_silence_minutes: number | null }>(`/admin/v1/executors/${executorId}/device-silence`, { minutes }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['executors'] }),
  });
}

export function useDeviceMessages(filters: { status?: string; executor_id?: string; limit?: number; offset?: number }) {
  return useQuery({
    queryKey: ['device-messages', filters],
    queryFn: () => get<{ messages: DeviceMessageView[]; total: number; limit: number; offset: number }>('/admin/v1/device-messages', { ...filters }),
    refetchInterval: 15_000,
  });
}

/** Linking completes the payment (money moves): one Idempotency-Key per intended link, one request at a time. */
/** The payment a link names: its id, or the merchant's order id (ext_id) with the merchant when two merchants use it. */
export type PaymentRef = { payment_id: string } | { ext_id: string; merchant_id?: string };

export function useLinkDeviceMessage() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; ref: PaymentRef }, headers) => post<DeviceMessageView>(`/admin/v1/device-messages/${input.id}/link`, input.ref, headers),
    { onSuccess: () => client.invalidateQueries({ queryKey: ['device-messages'] }) },
  );
}

export function useSetAsideDeviceMessage() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; note: string }) => post<DeviceMessageView>(`/admin/v1/device-messages/${input.id}/set-aside`, { note: input.note }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['device-messages'] }),
  });
}
