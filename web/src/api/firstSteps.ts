import { useQuery } from '@tanstack/react-query';
import { get } from './client';

/** A step to a first payment (GET /admin/v1/first-steps), in the order a new operator takes them. */
export type FirstStep = 'rate' | 'merchant' | 'terminal' | 'executor' | 'deposit' | 'requisite' | 'phone';

/** Which steps to a first payment are done, read from the data. */
export function useFirstSteps() {
  return useQuery({
    queryKey: ['first-steps'],
    queryFn: () => get<{ steps: { step: FirstStep; done: boolean }[]; done: boolean }>('/admin/v1/first-steps'),
  });
}
