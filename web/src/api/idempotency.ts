import { useRef } from 'react';

/**
 * One Idempotency-Key per intended money move, kept by the mutation hook that sends it: the same
 * key until the move succeeds, so a retry after a lost answer is done once, then a new one.
 */
export function useIdempotencyKey(): { headers(): Record<string, string>; renew(): void } {
  const key = useRef<string>(crypto.randomUUID());
  return {
    headers: () => ({ 'idempotency-key': key.current }),
    renew: () => {
      key.current = crypto.randomUUID();
    },
  };
}
