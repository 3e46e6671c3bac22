import { useQuery } from '@tanstack/react-query';
import { get } from './client';

export interface Figures {
  created: number;
  completed: number;
  conversion: string | null;
  median_seconds_to_complete: number | null;
  amount_completed: { currency: string; amount: string }[];
}

export interface Dashboard {
  window: 'hour' | 'day';
  from: string;
  to: string;
  bucket_seconds: number;
  series: { at: string; created: number; completed: number }[];
  totals: Figures;
  by_terminal: (Figures & { terminal_id: string; terminal_name: string; merchant_name: string })[];
  by_executor: (Figures & { executor_id: string; executor_name: string })[];
  lost_demand: {
    total: number;
    rows: { code: string; method: string; bank: string | null; currency: string; risk_rule: string | null; count: number; amount: string }[];
    /** Refusals by what refused them: a risk rule, or null for the pool's own (no requisites, same amount). */
    by_rule: { rule: string | null; count: number }[];
  };
  queues: {
    disputes_open: number;
    notifications_unmatched: number;
    device_messages_waiting: number;
    payouts_pending: number;
    payouts_processing: number;
    withdrawals_pending: number;
    withdrawals_processing: number;
  };
  balances: {
    currency: string;
    terminals_available: string;
    terminals_frozen: string;
    executors_available: string;
    executors_frozen: string;
    platform_revenue: string;
  };
}

/** The dashboard's figures, refreshed every 10 seconds while it is open (live, without a reload). */
export function useDashboard(window: 'hour' | 'day') {
  return useQuery({ queryKey: ['dashboard', window], queryFn: () => get<Dashboard>('/admin/v1/dashboard', { window }), refetchInterval: 10_000 });
}
