import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// Issue 30, item 10: `npm start` rebuilt everything (tsc, assets, Vite) on every start, so a
// restart after a crash took a minute longer than the service needs. Its prestart now builds only
// when a source changed since the last build. Tried on a small project with the real prestart
// and stamp script and a build that copies src/ to dist/ and counts its runs.

const ROOT = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const work = mkdtempSync(join(tmpdir(), 'kassir-build-stamp-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const FAKE_BUILD = `
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
mkdirSync('dist/console', { recursive: true });
writeFileSync('dist/main.js', readFileSync('src/main.ts'));
writeFileSync('dist/cli.js', '');
cpSync('web/src', 'dist/console/src', { recursive: true });
writeFileSync('dist/console/index.html', String(Date.now()));
appendFileSync('builds.log', 'built\\n');
`;

function write(file: string, content: string): void {
  mkdirSync(join(work, file, '..'), { recursive: true });
  writeFileSync(join(work, file), content);
}

/** `npm start`'s prestart in the small project: what it printed and how many builds have run so far. */
function prestart(): Promise<{ output: string; builds: number }> {
  return new Promise((done, fail) =>
    execFile('npm', ['run', 'prestart'], { cwd: work, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return fail(new Error(`${error.message}\n${stdout}\n${stderr}`));
      let builds = 0;
      try {
        builds = readFileSync(join(work, 'builds.log'), 'utf8').split('\n').filter(Boolean).length;
      } catch {}
      done({ output: stdout + stderr, builds });
    }),
  );
}

describe('npm start builds only what changed', () => {
  it('the real build ends by recording what it was built from', () => {
    expect(pkg.scripts.build).toMatch(/&& node scripts\/build-stamp\.mjs record$/);
    // npm install (prepare) and npm start (prestart) both build only when needed, and never need
    // the build tools when dist/ is there (a production install has none: issue 39).
    expect(pkg.scripts.prepare).toBe('node scripts/build-stamp.mjs ensure');
    expect(pkg.scripts.prestart).toBe('node scripts/build-stamp.mjs ensure');
  });

  it('builds on the first start and after a source changed, and not on a restart with nothing changed', async () => {
    mkdirSync(join(work, 'scripts'));
    cpSync(join(ROOT, 'scripts', 'build-stamp.mjs'), join(work, 'scripts', 'build-stamp.mjs'));
    write('fake-build.mjs', FAKE_BUILD);
    write(
      'package.json',
      JSON.stringify({
        name: 'stamp-check',
        private: true,
        type: 'module',
        scripts: { build: 'node fake-build.mjs && node scripts/build-stamp.mjs record', prestart: pkg.scripts.prestart },
      }),
    );
    write('src/main.ts', 'console.log("v1");\n');
    write('web/src/App.tsx', 'export const App = 1;\n');
    // The build tools, as `npm install` with dev dependencies leaves them.
    write('node_modules/typescript/package.json', '{}');
    write('node_modules/vite/package.json', '{}');

    // Never built: builds.
    expect(await prestart()).toMatchObject({ builds: 1 });
    // A restart: nothing changed, nothing built.
    expect(await prestart()).toMatchObject({ builds: 1, output: expect.stringContaining('up to date') });
    // A file touched (a checkout, a copy) with the same content: still nothing to build.
    utimesSync(join(work, 'src/main.ts'), new Date(), new Date(Date.now() + 5000));
    expect(await prestart()).toMatchObject({ builds: 1 });

    // A server source changed: built, and dist/ has the change.
    write('src/main.ts', 'console.log("v2");\n');
    expect(await prestart()).toMatchObject({ builds: 2 });
    expect(readFileSync(join(work, 'dist/main.js'), 'utf8')).toContain('v2');
    expect(await prestart()).toMatchObject({ builds: 2 });

    // A web app source changed, or a file added: built.
    write('web/src/App.tsx', 'export const App = 2;\n');
    expect(await prestart()).toMatchObject({ builds: 3 });
    expect(readFileSync(join(work, 'dist/console/src/App.tsx'), 'utf8')).toContain('2');
    write('src/new.ts', 'export {};\n');
    expect(await prestart()).toMatchObject({ builds: 4 });

    // An output rebuilt or removed since the last build (`npm run build:web` on other sources): built.
    writeFileSync(join(work, 'dist/console/index.html'), 'other');
    expect(await prestart()).toMatchObject({ builds: 5 });
    rmSync(join(work, 'dist/main.js'));
    expect(await prestart()).toMatchObject({ builds: 6 });
    expect(await prestart()).toMatchObject({ builds: 6 });

    // Without the build tools (npm ci --omit=dev): a changed source is reported, dist/ runs as it is.
    rmSync(join(work, 'node_modules'), { recursive: true });
    write('src/main.ts', 'console.log("v3");\n');
    const stale = await prestart();
    expect(stale).toMatchObject({ builds: 6, output: expect.stringContaining('the build tools (dev dependencies) are not installed: running dist/ as it is') });
    // A packed release: dist/ without sources.
    rmSync(join(work, 'src'), { recursive: true });
    rmSync(join(work, 'web'), { recursive: true });
    expect(await prestart()).toMatchObject({ builds: 6, output: expect.stringContaining('a built release (dist/ without sources): not building') });
    // No dist/ and no tools: refused with what to do.
    rmSync(join(work, 'dist'), { recursive: true });
    await expect(prestart()).rejects.toThrow(
      /dist\/ is incomplete, and the build tools .* are not installed\. Install them and build \(npm ci && npm run build\)/,
    );
  }, 120_000);
});
