import { execFileSync } from 'node:child_process';
import { constants, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

/** Where the Chromium that tests and scripts drive comes from. */
export interface ChromiumExecutable {
  path: string;
  source: 'CHROMIUM' | 'system' | 'bundled';
}

/**
 * Flags for a headless Chromium on these machines: no sandbox (tests run as root), and none of
 * the background connections that the closed network would refuse many at a time.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const SYSTEM_NAMES = ['chromium', 'chromium-browser'];

/**
 * Finds a Chromium without downloading anything: the one `CHROMIUM` names, else a system
 * Chromium on PATH (Debian's package installs /usr/bin/chromium), else the build that
 * `@sparticuz/chromium` ships inside its npm package — decompressed into the temporary directory
 * on first use — so `npm install && npm test` works on a machine with no browser package.
 */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumExecutable> {
  if (env.CHROMIUM) return { path: env.CHROMIUM, source: 'CHROMIUM' };
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of SYSTEM_NAMES) {
      const candidate = join(dir, name);
      if (await isExecutable(candidate)) return { path: candidate, source: 'system' };
    }
  }
  const bundled = (await import('@sparticuz/chromium')).default;
  return { path: await bundled.executablePath(), source: 'bundled' };
}

/** Launches headless Chromium from `executablePath` (default: what findChromium finds). */
export async function launchChromium(executablePath?: string): Promise<Browser> {
  const path = executablePath ?? (await findChromium()).path;
  return chromium.launch({ executablePath: path, args: CHROMIUM_ARGS });
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The web app (console and cabinet) built: `npm test` builds it first (pretest); a file run on its own builds it if missing. */
export function ensureWebBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/console/index.html'))) execFileSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'ignore' });
}

/**
 * Where a test's screenshots go: every run takes them (rendering is part of the journey);
 * `npm run screenshots:console` (SCREENSHOTS=1) writes them where the README and the guides in docs/ show them, other
 * runs into a temporary folder.
 */
export function screenshotDir(name: string): string {
  const dir = process.env.SCREENSHOTS ? join(ROOT, 'docs/screenshots') : mkdtempSync(join(tmpdir(), `kassir-${name}-`));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * A page in a fresh context (own cookies), English, motion reduced (dialogs appear at once, so
 * screenshots catch them whole), and `problems` collecting every CSP refusal and page error for
 * the test to assert empty.
 */
export async function watchedPage(browser: Browser, options: BrowserContextOptions): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ locale: 'en-US', reducedMotion: 'reduce', ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { page, problems };
}
