import { useQuery } from '@tanstack/react-query';
import { get } from './client';

/** The ledger's invariants, checked on the server (src/ledger): each problem found, none when ok. */
export function useLedgerCheck() {
  return useQuery({
    queryKey: ['ledger', 'check'],
    queryFn: () => get<{ ok: boolean; problems: { invariant: string; detail: string }[] }>('/admin/v1/ledger/check'),
  });
}

/** What a statement line is about, as the statement routes answer it (src/ledger/ledger.repo.ts aboutOf): the names a person knows it by. */
export interface StatementAbout {
  type: string;
  ext_id: string | null;
  amount: string | number;
  currency: string;
  status: string;
}
