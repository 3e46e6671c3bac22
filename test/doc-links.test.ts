/**
 * The README and the guides in docs/ (issue 32, item 6): every relative link and picture points at a
 * file that exists, every `#anchor` at a heading of its page (GitHub's slugs), and the README stays
 * short enough to read at a glance — the rest lives in the guides it links to.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PAGES = [
  'README.md',
  'sdk/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown
    .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
    .split('\n')
    .map((line) => line.replace(/`[^`]*`/g, ''))
    .join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes; repeats get -1, -2… */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, title] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = title!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Every link target and picture source of a page. */
function targets(markdown: string): string[] {
  const text = prose(markdown);
  return [...text.matchAll(/\]\(([^)\s]+)\)/g), ...text.matchAll(/<img [^>]*src="([^"]+)"/g)].map((m) => m[1]!);
}

describe('the README and the guides', () => {
  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const target of targets(text)) {
        if (/^[a-z]+:/i.test(target)) continue;
        checked++;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no file ${relative(ROOT, file)})`);
          continue;
        }
        if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('keep the README at most 300 lines, linking to each guide', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    for (const guide of ['operator', 'executor', 'merchant', 'development', 'idempotency', 'performance', 'observability', 'devices']) {
      expect(readme).toContain(`](docs/${guide}.md`);
    }
  });

  it('document every setting config.ts reads in the configuration table', () => {
    const operator = readFileSync(join(ROOT, 'docs/operator.md'), 'utf8');
    const table = operator.slice(operator.indexOf('## Configuration'), operator.indexOf('\n## ', operator.indexOf('## Configuration') + 1));
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
    const read = new Set([...config.matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
