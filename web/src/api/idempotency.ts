import { type UseMutationOptions, type UseMutationResult, useMutation } from '@tanstack/react-query';
import { useRef } from 'react';
import { ApiError } from './client';

/**
 * One Idempotency-Key per intended money move, kept by the mutation hook that sends it: the same
 * key until the move succeeds, so a retry after a lost answer is done once, then a new one. Given
 * the values being sent, `headers` also starts a new key when they differ from those the key was
 * first sent with: changed values are another action.
 */
export function useIdempotencyKey(): { headers(values?: unknown): Record<string, string>; renew(): void } {
  const key = useRef<{ key: string; values?: string }>({ key: crypto.randomUUID() });
  return {
    headers: (values?: unknown) => {
      const fingerprint = values === undefined ? undefined : JSON.stringify(values);
      if (fingerprint !== undefined) {
        if (key.current.values !== undefined && key.current.values !== fingerprint) key.current = { key: crypto.randomUUID() };
        key.current.values = fingerprint;
      }
      return { 'idempotency-key': key.current.key };
    },
    renew: () => {
      key.current = { key: crypto.randomUUID() };
    },
  };
}

/**
 * Whether Kassir answered the request for good, so that nothing of it can still happen and the
 * next attempt is a new action: a 4xx answer that is not about the key itself (its first
 * request still being answered). A lost answer (a network error, a 5xx) keeps the key, so that
 * sending again is done once.
 */
function answeredForGood(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.data?.idempotency_key === undefined;
}

/**
 * A mutation that moves money (issue 30): it sends one Idempotency-Key per intended action (see
 * useIdempotencyKey), and it runs one request at a time — a second `mutate` while one is on its
 * way (a double click landing before the button shows it is busy) is dropped, not sent. Forms
 * show `isPending` on their button, which Mantine then disables.
 */
export function useMoneyMutation<TData, TInput>(
  send: (input: TInput, headers: Record<string, string>) => Promise<TData>,
  options: Omit<UseMutationOptions<TData, Error, TInput>, 'mutationFn'> = {},
): UseMutationResult<TData, Error, TInput> {
  const key = useIdempotencyKey();
  const running = useRef(false);
  const mutation = useMutation<TData, Error, TInput>({
    ...options,
    mutationFn: (input) => send(input, key.headers(input)),
    onSuccess: (...args) => {
      key.renew();
      return options.onSuccess?.(...args);
    },
    onError: (...args) => {
      if (answeredForGood(args[0])) key.renew();
      return options.onError?.(...args);
    },
    onSettled: (...args) => {
      running.current = false;
      return options.onSettled?.(...args);
    },
  });
  return {
    ...mutation,
    mutate: (...args: Parameters<typeof mutation.mutate>) => {
      if (running.current) return;
      running.current = true;
      mutation.mutate(...args);
    },
  } as UseMutationResult<TData, Error, TInput>;
}
