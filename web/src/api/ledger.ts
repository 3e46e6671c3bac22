import { useQuery } from '@tanstack/react-query';
import { get } from './client';

/** The ledger's invariants, checked on the server (src/ledger): each problem found, none when ok. */
export function useLedgerCheck() {
  return useQuery({
    queryKey: ['ledger', 'check'],
    queryFn: () => get<{ ok: boolean; problems: { invariant: string; detail: string }[] }>('/admin/v1/ledger/check'),
  });
}
