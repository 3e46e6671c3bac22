/** CSV for the operator's downloads (reports, payments): RFC 4180 quoting, CRLF line ends. */

/** One CSV field: quoted when it holds a comma, a quote or a line break, quotes doubled (RFC 4180). */
export function csvField(value: string | number | null | undefined): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * A field whose text someone outside the platform chose (a merchant's ext_id or client_id): a
 * spreadsheet opening the file would run a leading `=`, `+`, `-`, `@`, tab or carriage return as a
 * formula (OWASP "CSV Injection"), so such text is prefixed with `'`, which spreadsheets show as
 * text. Never for amounts or ids, whose text is ours.
 */
export function csvText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return csvField(/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);
}

/** A document: the header row, then the rows, each cell already a field (csvField or csvText). */
export function csvDocument(header: readonly string[], rows: readonly string[][]): string {
  const lines = [header.map(csvField).join(','), ...rows.map((cells) => cells.join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
