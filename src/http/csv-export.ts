import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { csvDocument, csvField, csvText } from '../lib/csv.js';

/** A cell's text as the list answered it: numbers and our own numeric strings as they are, any other text guarded against formulas. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return csvField(String(value));
  if (typeof value === 'string') return /^-?\d+(\.\d+)?$/.test(value) ? csvField(value) : csvText(value);
  return csvText(JSON.stringify(value));
}

/** The one list in a list answer (`{payouts: [...], total, limit, offset}`), if there is exactly one. */
function listOf(body: unknown): Record<string, unknown>[] | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const lists = Object.values(body).filter(
    (value) => Array.isArray(value) && value.every((row) => typeof row === 'object' && row !== null && !Array.isArray(row)),
  );
  return lists.length === 1 ? (lists[0] as Record<string, unknown>[]) : undefined;
}

/**
 * `?format=csv` on any operator (or merchant cabinet) list: the same rows, filtered and paged the same way, as a CSV
 * download — one column per field in the order the API answers them, nested values as JSON. A
 * route that renders CSV itself (reports, payments) answers text/csv already and is left alone.
 */
export function csvExport(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (request.method !== 'GET' || (request.query as Record<string, unknown>)?.format !== 'csv' || reply.statusCode !== 200) return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json') || typeof payload !== 'string') return payload;
    const rows = listOf(JSON.parse(payload));
    if (!rows) return payload;
    const columns: string[] = [];
    for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
    const name = (request.routeOptions.url ?? 'list')
      .replace(/^\/(admin|merchant)\/v1\//, '')
      .replace(/[^a-z0-9]+/gi, '-')
      .replace(/^-|-$/g, '');
    reply.header('content-type', 'text/csv; charset=utf-8');
    reply.header('content-disposition', `attachment; filename="${name}-${new Date().toISOString().slice(0, 10)}.csv"`);
    return csvDocument(
      columns,
      rows.map((row) => columns.map((column) => cell(row[column]))),
    );
  });
}
