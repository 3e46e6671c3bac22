import { useCallback, useState } from 'react';

/**
 * One Idempotency-Key per intended money move: a form sends the same key until the move succeeds,
 * so a retry after a lost answer is done once, and the next move gets a new key (`renew`).
 */
export function useIdempotencyKey(): [key: string, renew: () => void] {
  const [key, setKey] = useState(() => crypto.randomUUID());
  const renew = useCallback(() => setKey(crypto.randomUUID()), []);
  return [key, renew];
}
