import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put, withQuery } from './client';

// The risk rules (issue 36): their decisions (hits), the payer blocks, the velocity limits, the
// traffic class thresholds and the requisite velocity — the only place that knows these endpoints.

export const RISK_RULES = ['block', 'velocity', 'traffic_class', 'receipt_reused', 'reference_reused', 'payer_name'] as const;
export const BLOCK_KINDS = ['client_id', 'card', 'phone', 'ip', 'device'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

export interface RiskHitView {
  id: string;
  created_at: string;
  rule: string;
  action: 'refused' | 'flagged';
  merchant_id: string | null;
  merchant_name: string | null;
  terminal_id: string | null;
  terminal_name: string | null;
  payment_id: string | null;
  payout_id: string | null;
  dispute_id: string | null;
  inputs: Record<string, unknown>;
  figure: string;
  settled_at: string | null;
  settled_by: string | null;
}

export type HitFilters = { rule?: string; action?: string; merchant_id?: string; payment_id?: string; dispute_id?: string; unsettled?: string };

export function useRiskHits(filters: HitFilters & { limit: number; offset: number }, enabled = true) {
  return useQuery({
    queryKey: ['risk', 'hits', filters],
    queryFn: () => get<{ hits: RiskHitView[]; total: number }>('/admin/v1/risk/hits', filters),
    refetchInterval: 15_000,
    enabled,
  });
}

/** The export of every hit the filters match (not one page): a plain link, the browser downloads it. */
export function riskHitsExportPath(filters: HitFilters): string {
  return withQuery('/admin/v1/risk/hits/export', filters);
}

export interface RiskSummaryView {
  from: string;
  to: string;
  rules: string[];
  series: { at: string; total: number; by_rule: Record<string, number> }[];
  totals: Record<string, number>;
}

export function useRiskSummary(hours: number) {
  return useQuery({ queryKey: ['risk', 'summary', hours], queryFn: () => get<RiskSummaryView>('/admin/v1/risk/summary', { hours }), refetchInterval: 60_000 });
}

/** A person settles a flag: they looked, and the payment or dispute goes on its way (h3's route). */
export function useSettleHit() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, comment }: { id: string; comment?: string }) => post(`/admin/v1/risk/hits/${id}/settle`, comment ? { comment } : {}),
    onSuccess: () => client.invalidateQueries({ queryKey: ['risk'] }),
  });
}

export interface BlockView {
  id: string;
  kind: BlockKind;
  value_shown: string;
  merchant_id: string | null;
  reason: string;
  expires_at: string | null;
  created_by: string;
  created_at: string;
  active?: boolean;
}

export function useRiskBlocks(filters: { kind?: string; merchant_id?: string; active?: string; limit: number; offset: number }) {
  return useQuery({ queryKey: ['risk', 'blocks', filters], queryFn: () => get<{ blocks: BlockView[]; total: number }>('/admin/v1/risk/blocks', filters) });
}

/** A block: by its value, or by the mark a payment or a dispute carries (`payment_id` / `dispute_id` instead of `value`). */
export interface NewBlock {
  kind: BlockKind;
  value?: string;
  payment_id?: string;
  dispute_id?: string;
  merchant_id?: string | null;
  reason: string;
  expires_at?: string | null;
}

export function useAddBlock() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (block: NewBlock) => post<BlockView>('/admin/v1/risk/blocks', block),
    onSuccess: () => client.invalidateQueries({ queryKey: ['risk', 'blocks'] }),
  });
}

export function useRemoveBlock() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del(`/admin/v1/risk/blocks/${id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['risk', 'blocks'] }),
  });
}

export interface LimitView {
  scope: 'client_id' | 'ip';
  window_seconds: number;
  max_payments: number | null;
  max_amount: number | null;
  updated_by?: string;
  updated_at?: string;
}

export function useRiskLimits() {
  return useQuery({ queryKey: ['risk', 'limits'], queryFn: () => get<{ limits: LimitView[] }>('/admin/v1/risk/limits') });
}

export function useSaveLimit() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (limit: Omit<LimitView, 'updated_by' | 'updated_at'>) => put<LimitView>('/admin/v1/risk/limits', limit),
    onSuccess: () => client.invalidateQueries({ queryKey: ['risk', 'limits'] }),
  });
}

export interface ClassesView {
  returning_from: number;
  trusted_from: number;
}

export function useRiskClasses() {
  return useQuery({ queryKey: ['risk', 'classes'], queryFn: () => get<ClassesView>('/admin/v1/risk/classes') });
}

export function useSaveClasses() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (classes: ClassesView) => put<ClassesView>('/admin/v1/risk/classes', classes),
    onSuccess: () => client.invalidateQueries({ queryKey: ['risk', 'classes'] }),
  });
}

type WindowLimit = { max: number; window_seconds: number } | null;
export interface RequisiteVelocityView {
  payments: WindowLimit;
  amount: WindowLimit;
}

export function useRequisiteVelocity() {
  return useQuery({ queryKey: ['risk', 'requisite-limits'], queryFn: () => get<RequisiteVelocityView>('/admin/v1/risk/requisite-limits') });
}

export function useSaveRequisiteVelocity() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (velocity: RequisiteVelocityView) => put<RequisiteVelocityView>('/admin/v1/risk/requisite-limits', velocity),
    onSuccess: () => client.invalidateQueries({ queryKey: ['risk', 'requisite-limits'] }),
  });
}
