import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, setCsrfToken, signInAgain } from './client';

export interface Me {
  user: { id: string; email: string; role: 'admin' | 'support' | 'finance' | 'executor' | 'merchant'; executor_id: string | null; merchant_id: string | null };
  two_factor: boolean;
  two_factor_required: boolean;
  /** Signed in with a password generated for them: they choose their own before anything else. */
  must_change_password: boolean;
  confirmed_until: string | null;
  csrf_token: string;
}

export const meKey = ['auth', 'me'] as const;

/** Who is signed in; null when no one is. */
export function useMe() {
  const client = useQueryClient();
  return useQuery({
    queryKey: meKey,
    queryFn: async (): Promise<Me | null> => {
      try {
        const me = await get<Me>('/auth/v1/me');
        setCsrfToken(me.csrf_token);
        return me;
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 401)) throw err;
        // Someone was signed in and the session ended under them: they sign in again over the
        // screen they are on (which stays as it was) rather than be dropped to the sign-in page.
        if (client.getQueryData(meKey) && (await signInAgain())) {
          const me = await get<Me>('/auth/v1/me');
          setCsrfToken(me.csrf_token);
          return me;
        }
        return null;
      }
    },
    staleTime: 60_000,
  });
}

export interface SignInInput {
  email: string;
  password: string;
  otp?: string;
}

/** Signing in again after the session ended, as the same person: nothing on the screen is dropped, only refreshed. */
export function useSignInAgain() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: SignInInput) => post<{ csrf_token: string }>('/auth/v1/login', input),
    onSuccess: async (result) => {
      setCsrfToken(result.csrf_token);
      await client.invalidateQueries();
    },
  });
}

/** A person with a generated password chooses their own; then the app goes on (two-factor enrolment, where required, comes next). */
export function useChangeFirstPassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { current_password: string; new_password: string }) => post<void>('/auth/v1/password', input),
    onSuccess: () => client.invalidateQueries({ queryKey: meKey }),
  });
}

export function useLogin() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: SignInInput) => post<{ csrf_token: string }>('/auth/v1/login', input),
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

/**
 * Finishes enrolment. Who is signed in is learnt again only once the person has stored the recovery
 * codes (`done`): a person the operator made enrol first would otherwise leave the Security screen —
 * and the codes, shown this once — the moment two-factor is on.
 */
export function useTwoFactorEnable() {
  const client = useQueryClient();
  const mutation = useMutation({ mutationFn: (otp: string) => post<{ recovery_codes: string[] }>('/auth/v1/two-factor/enable', { otp }) });
  return { ...mutation, done: () => client.invalidateQueries({ queryKey: meKey }) };
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
