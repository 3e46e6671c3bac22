import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';

// Message forms people taught (src/incoming/forms.admin.ts, forms.executor.ts): staff teach and
// put them live on the operator API; an executor proposes drafts on the executor API.

export type FormHole = 'amount' | 'card' | 'payer' | 'balance' | 'time' | 'date' | 'any';

export interface FormMark {
  hole: FormHole;
  start: number;
  end: number;
}

export interface FormSuggestion {
  text: string;
  bank: string | null;
  currency: string;
  marks: FormMark[];
}

export interface ParserFormVersion {
  version: number;
  template: string;
  sample: string;
  status: 'draft' | 'live' | 'retired';
  created_by: string;
  created_at: string;
  published_by: string | null;
  published_at: string | null;
}

export interface ParserForm {
  id: string;
  name: string;
  bank: string;
  currency: string;
  status: 'draft' | 'live' | 'retired';
  live_version: number | null;
  proposed_by_executor: string | null;
  created_by: string;
  created_at: string;
  versions: ParserFormVersion[];
}

/** A line the check before going live found: where it is, its text, why it refuses the form. */
export interface CheckedLine {
  source: string;
  text: string;
  reason: string;
  reads?: { amount: string; digits?: string };
}

export type FormArea = 'console' | 'cabinet';
const base = (area: FormArea) => (area === 'console' ? '/admin/v1/parser-forms' : '/executor/v1/parser-forms');

export function useFormSuggestion(area: FormArea, kind: 'device_message' | 'notification', id: string) {
  return useQuery({ queryKey: ['parser-forms', 'suggest', area, kind, id], queryFn: () => get<FormSuggestion>(`${base(area)}/suggest`, { kind, id }) });
}

export function useParserForms(area: FormArea) {
  return useQuery({ queryKey: ['parser-forms', area], queryFn: () => get<{ forms: ParserForm[] }>(base(area)) });
}

export interface NewForm {
  name: string;
  bank: string;
  currency: string;
  template: string;
  sample: string;
  source?: { kind: 'device_message' | 'notification'; id: string };
}

/** A new form (a draft), or a new draft version of `formId`. */
export function useSaveForm(area: FormArea) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ formId, form }: { formId?: string; form: NewForm }) =>
      formId ? post<ParserForm>(`${base(area)}/${formId}/versions`, { template: form.template, sample: form.sample }) : post<ParserForm>(base(area), form),
    onSuccess: () => client.invalidateQueries({ queryKey: ['parser-forms'] }),
  });
}

/** Puts a draft version live (staff): refused with 422 FORM_001 and `data.offending` when the check finds lines it reads wrongly. */
export function usePublishForm() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ formId, version }: { formId: string; version: number }) =>
      post<{ form: ParserForm; check: { reads_newly: CheckedLine[]; corpus_lines: number; messages: number } }>(
        `/admin/v1/parser-forms/${formId}/versions/${version}/publish`,
      ),
    onSuccess: () => {
      client.invalidateQueries({ queryKey: ['parser-forms'] });
      client.invalidateQueries({ queryKey: ['device-messages'] });
    },
  });
}

export function useRetireForm() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (formId: string) => post<ParserForm>(`/admin/v1/parser-forms/${formId}/retire`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['parser-forms'] }),
  });
}
