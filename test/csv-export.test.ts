import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminOk, startTestService, type TestService } from './helpers.js';

// `?format=csv` on the operator's lists (src/http/csv-export.ts): the console's "Export CSV".
let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

/** RFC 4180 rows (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && c === '"') {
      quoted = false;
    } else if (quoted) {
      field += c;
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else {
      field += c;
    }
  }
  return rows;
}

describe('CSV export of operator lists', () => {
  it('answers the same page of the same filtered list as a CSV download, text that looks like a formula defused', async () => {
    await adminOk(service.app, 'POST', '/users', { email: '=HYPERLINK("x")@kassir.test', role: 'support', password: 'correct horse battery' });
    await adminOk(service.app, 'POST', '/users', { email: 'plain@kassir.test', role: 'finance', password: 'correct horse battery' });
    const json = await adminOk<{ users: Record<string, unknown>[] }>(service.app, 'GET', '/users?role=support');
    const res = await admin(service.app, 'GET', '/users?role=support&format=csv');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="users-\d{4}-\d{2}-\d{2}\.csv"$/);
    const [header, ...rows] = parseCsv(res.body);
    expect(header).toEqual(Object.keys(json.users[0]!));
    expect(rows).toHaveLength(json.users.length);
    const email = rows[0]![header!.indexOf('email')];
    expect(email).toBe(`'=hyperlink("x")@kassir.test`);
    expect(rows[0]![header!.indexOf('two_factor')]).toBe('false');
  });

  it('leaves JSON answers and routes that render CSV themselves alone', async () => {
    expect((await admin(service.app, 'GET', '/users')).headers['content-type']).toMatch(/^application\/json/);
    const report = await admin(service.app, 'GET', '/reports/merchants?format=csv');
    expect(report.headers['content-type']).toMatch(/^text\/csv/);
    expect(report.headers['content-disposition']).not.toMatch(/filename="reports-merchants/);
  });
});
