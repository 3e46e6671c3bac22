import { useNavigate, useSearch } from '@tanstack/react-router';

export type Filters = Record<string, string | undefined>;

/**
 * A screen's filters and page, kept in the URL so a link reproduces the view: reads them as
 * strings and replaces them (an empty value removes the parameter; a filter change goes back to the first page).
 */
export function useUrlFilters(): [Filters, (changes: Filters) => void] {
  const search = useSearch({ strict: false }) as Record<string, unknown>;
  const navigate = useNavigate();
  const filters: Filters = {};
  for (const [key, value] of Object.entries(search)) if (value !== undefined && value !== null && value !== '') filters[key] = String(value);
  const update = (changes: Filters) => {
    const next: Filters = { ...filters, ...changes };
    if (!('offset' in changes)) delete next.offset;
    for (const key of Object.keys(next)) if (next[key] === undefined || next[key] === '') delete next[key];
    void navigate({ to: '.', search: next as never, replace: true });
  };
  return [filters, update];
}

export function pageOf(filters: Filters, limit: number): { limit: number; offset: number } {
  return { limit, offset: Number(filters.offset ?? 0) || 0 };
}
