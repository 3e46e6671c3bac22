import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, setCsrfToken } from './client';

export interface Me {
  user: { id: string; email: string; role: 'admin' | 'support' | 'finance' | 'executor' | 'merchant'; executor_id: string | null; merchant_id: string | null };
  two_factor: boolean;
  two_factor_required: boolean;
  confirmed_until: string | null;
  csrf_token: string;
}

export const meKey = ['auth', 'me'] as const;

/** Who is signed in; null when no one is. */
export function useMe() {
  return useQuery({
    queryKey: meKey,
    queryFn: async (): Promise<Me | null> => {
      try {
        const me = await get<Me>('/auth/v1/me');
        setCsrfToken(me.csrf_token);
        return me;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return null;
        throw err;
      }
    },
    staleTime: 60_000,
  });
}

export function useLogin() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { email: string; password: string; otp?: string }) => post<{ csrf_token: string }>('/auth/v1/login', input),
    onSuccess: async (result) => {
      setCsrfToken(result.csrf_token);
      // Nothing another person's session fetched may show: drop it all, then learn who this is.
      client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' });
      await client.invalidateQueries({ queryKey: meKey });
    },
  });
}

export function useLogout() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => post<void>('/auth/v1/logout'),
    onSettled: () => {
      setCsrfToken(null);
      client.setQueryData(meKey, null);
      client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' });
    },
  });
}

export function useConfirmIdentity() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { otp?: string; password?: string }) => post<{ confirmed_until: string }>('/auth/v1/confirm', input),
    onSuccess: () => client.invalidateQueries({ queryKey: meKey }),
  });
}

export function useTwoFactorSetup() {
  return useMutation({ mutationFn: () => post<{ secret: string; otpauth_url: string; qr_code: string }>('/auth/v1/two-factor/setup') });
}

export function useTwoFactorEnable() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (otp: string) => post<{ recovery_codes: string[] }>('/auth/v1/two-factor/enable', { otp }),
    onSuccess: () => client.invalidateQueries({ queryKey: meKey }),
  });
}

export interface SessionView {
  id: string;
  current: boolean;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

export function useSessions() {
  return useQuery({ queryKey: ['auth', 'sessions'], queryFn: () => get<{ sessions: SessionView[] }>('/auth/v1/sessions') });
}

export function useRevokeSession() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<void>(`/auth/v1/sessions/${id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['auth', 'sessions'] }),
  });
}

export function useChangePassword() {
  return useMutation({ mutationFn: (input: { current_password: string; new_password: string }) => post<void>('/auth/v1/password', input) });
}
