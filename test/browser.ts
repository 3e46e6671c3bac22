import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

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
