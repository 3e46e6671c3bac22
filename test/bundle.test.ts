import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 32, item 6: the console was one 1.29 MB script (376 KB gzipped) that the sign-in page
// fetched whole, charts and every screen included. Each screen is now a chunk loaded when its
// route opens, and the first screen holds a budget: a size, not a timing, so a slow machine
// cannot fail it and a heavy import into the sign-in path cannot pass it. The web app is built
// from the sources as they are, into a directory of its own, and measured by scripts/bundle-size.mjs.

const ROOT = resolve(import.meta.dirname, '..');
/** The first screen's gzipped script, in bytes (kB as Vite prints them). */
const BUDGET = 250 * 1000;

interface FirstScreen {
  files: { path: string; bytes: number; gzipped: number }[];
  bytes: number;
  gzipped: number;
}

const out = mkdtempSync(join(tmpdir(), 'kassir-bundle-'));
let first: FirstScreen;
let chunks: string[];

beforeAll(() => {
  execFileSync('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--outDir', out, '--emptyOutDir', '--logLevel', 'error'], {
    cwd: ROOT,
    stdio: 'pipe',
    // Vitest sets NODE_ENV=test, with which Vite would bundle React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
  });
  first = JSON.parse(execFileSync('node', ['scripts/bundle-size.mjs', out, '--json'], { cwd: ROOT, encoding: 'utf8' })) as FirstScreen;
  chunks = readdirSync(join(out, 'assets')).filter((name) => name.endsWith('.js'));
}, 180_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the console is split so that the sign-in page loads little script', () => {
  it('counts the entry index.html names and what it preloads', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const entry = /<script type="module"[^>]*src="\/console\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(entry).toBeDefined();
    const measured = first.files.map((f) => f.path);
    expect(measured).toContain(entry);
    for (const [, preload] of html.matchAll(/<link rel="modulepreload"[^>]*href="\/console\/(assets\/[^"]+\.js)"/g)) expect(measured).toContain(preload);
    expect(first.gzipped).toBe(first.files.reduce((sum, f) => sum + f.gzipped, 0));
  });

  it(`loads at most ${BUDGET / 1000} kB of gzipped script on the first screen`, () => {
    expect(first.gzipped).toBeGreaterThan(0);
    expect(first.gzipped, first.files.map((f) => `${f.path}: ${f.gzipped}`).join('\n')).toBeLessThanOrEqual(BUDGET);
  });

  it('leaves the screens and the charts to their own chunks, fetched when a screen opens', () => {
    const measured = first.files.map((f) => f.path.replace(/^assets\//, ''));
    for (const screen of ['Dashboard', 'Payments', 'Rates', 'CabinetHome', 'CabinetShell', 'Merchant', 'charts']) {
      const chunk = chunks.find((name) => name.startsWith(`${screen}-`));
      expect(chunk, `${screen} has a chunk of its own`).toBeDefined();
      expect(measured, `${screen} is not on the first screen`).not.toContain(chunk);
    }
  });
});
