/**
 * Readable output: aligned `key: value` blocks for one object, aligned tables for lists, secrets set apart.
 */
import type { Json, JsonObject } from './session.js';

export function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.map(text).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** One object as `key: value` lines; nested objects become dotted keys, lists of objects are left to tables. */
export function printObject(object: JsonObject, omit: string[] = []): void {
  const lines: [string, string][] = [];
  const walk = (prefix: string, value: JsonObject) => {
    for (const [key, inner] of Object.entries(value)) {
      if (omit.includes(key)) continue;
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) walk(`${prefix}${key}.`, inner);
      else if (!(Array.isArray(inner) && inner.some((item) => item !== null && typeof item === 'object'))) lines.push([prefix + key, text(inner)]);
    }
  };
  walk('', object);
  const width = Math.max(0, ...lines.map(([key]) => key.length)) + 1;
  for (const [key, value] of lines) console.log(`${`${key}:`.padEnd(width)} ${value}`);
}

/** Rows as a table with the given columns (field names, used as headers). */
export function printTable(rows: JsonObject[], columns: string[]): void {
  if (rows.length === 0) {
    console.log('(none)');
    return;
  }
  const cells = rows.map((row) => columns.map((column) => text(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(columns.map((column) => column.toUpperCase())));
  for (const row of cells) console.log(line(row));
}

/** Secrets are never retrievable again, so they stand apart with an explicit warning. */
export function printSecret(label: string, value: Json | undefined): void {
  console.log(`\n${label}: shown once, store it now (it cannot be retrieved later):\n\n  ${text(value)}\n`);
}
