import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, patch, post } from './client';

export interface UserView {
  id: string;
  email: string;
  role: string;
  is_active: boolean;
  two_factor: boolean;
  /** Signed in with a generated password and not yet chosen their own. */
  must_change_password: boolean;
  created_at: string;
}

/** A one-time password and whose it is: the API answers both, so a screen never shows one under another person. */
export interface IssuedPassword {
  id: string;
  email: string;
  password: string;
}

export function useUsers(filters: { q?: string; role?: string; limit?: number; offset?: number }) {
  return useQuery({ queryKey: ['users', filters], queryFn: () => get<{ users: UserView[]; total: number }>('/admin/v1/users', { ...filters }) });
}

export function useCreateUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { email: string; role: string }) => post<IssuedPassword & { role: string }>('/admin/v1/users', input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
}

/** A sign-in to a cabinet: an executor's (POST /executors/:id/login) or a merchant's (POST /merchants/:id/users); its password is shown once. */
export function useCreateCabinetSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { email: string; role: 'executor' | 'merchant'; ownerId: string }) =>
      post<IssuedPassword & { role: string }>(
        input.role === 'executor' ? `/admin/v1/executors/${input.ownerId}/login` : `/admin/v1/merchants/${input.ownerId}/users`,
        { email: input.email },
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
}

/** Clears a person's lost second factor (audited); their sessions end and they enrol again. */
export function useResetTwoFactor() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => post<void>(`/admin/v1/users/${id}/two-factor/reset`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
}

export function useUpdateUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; role?: string; is_active?: boolean; reason?: string }) =>
      patch<UserView>(`/admin/v1/users/${input.id}`, { role: input.role, is_active: input.is_active, reason: input.reason }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
}

export function useResetPassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => post<IssuedPassword>(`/admin/v1/users/${id}/password`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
}

export interface AuditEntry {
  id: number;
  actor: string;
  ip: string | null;
  action: string;
  object_type: string;
  object_id: string | null;
  before: unknown;
  after: unknown;
  created_at: string;
}

export function useAudit(filters: { actor?: string; action?: string; object_type?: string; object_id?: string; limit?: number; offset?: number }) {
  return useQuery({ queryKey: ['audit', filters], queryFn: () => get<{ entries: AuditEntry[]; total: number }>('/admin/v1/audit', { ...filters }) });
}
