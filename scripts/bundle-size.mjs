// How much script the sign-in page makes the browser fetch: the entry that dist/console/index.html
// names, every chunk it preloads, and every chunk those import statically (not the screens they
// `import()` later), each gzipped as a server or CDN would send it.
//
//   node scripts/bundle-size.mjs [dir] [--json]
//     dir: a built web app (default dist/console, `npm run build:web`); --json: the figures as JSON
//
// test/bundle.test.ts holds the figure to its budget.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

/** The scripts index.html loads or preloads: their paths inside the built directory. */
function pageScripts(html) {
  const paths = [];
  for (const [tag] of html.matchAll(/<(script|link)\b[^>]*>/g)) {
    const isEntry = tag.startsWith('<script') && /\btype="module"/.test(tag);
    const isPreload = tag.startsWith('<link') && /\brel="modulepreload"/.test(tag);
    const url = /\b(?:src|href)="([^"]+)"/.exec(tag)?.[1];
    // The app is served under /console/ (vite.config.ts `base`); its files sit under the directory's assets/.
    if ((isEntry || isPreload) && url) paths.push(url.replace(/^\/console\//, ''));
  }
  return paths;
}

/** The chunks a chunk imports statically (`import … from "./x.js"`, `import "./x.js"`), not `import("./x.js")`. */
function staticImports(code) {
  return [...code.matchAll(/\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*)?["'](\.\/[^"']+\.js)["']/g)].map((m) => m[1]);
}

/**
 * The first screen's scripts in a built web app: each file with its size and gzipped size, and the
 * totals, in bytes.
 */
export function firstScreen(dir) {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) throw new Error(`${indexFile} does not exist: run \`npm run build:web\` first`);
  const seen = new Set();
  const queue = pageScripts(readFileSync(indexFile, 'utf8'));
  const files = [];
  while (queue.length > 0) {
    const path = queue.shift();
    if (seen.has(path)) continue;
    seen.add(path);
    const code = readFileSync(join(dir, path));
    files.push({ path, bytes: code.length, gzipped: gzipSync(code, { level: 9 }).length });
    const folder = path.slice(0, path.lastIndexOf('/') + 1);
    for (const imported of staticImports(code.toString('utf8'))) queue.push(folder + imported.slice(2));
  }
  return {
    files,
    bytes: files.reduce((sum, f) => sum + f.bytes, 0),
    gzipped: files.reduce((sum, f) => sum + f.gzipped, 0),
  };
}

/** kB as Vite prints them (1,000 bytes), so the figures agree with `npm run build:web`'s. */
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const dir = resolve(args.find((a) => !a.startsWith('--')) ?? 'dist/console');
  const result = firstScreen(dir);
  if (args.includes('--json')) {
    console.log(JSON.stringify(result));
  } else {
    for (const f of result.files) console.log(`  ${f.path.padEnd(44)} ${kb(f.bytes).padStart(10)} ${kb(f.gzipped).padStart(10)} gzipped`);
    console.log(`first screen: ${result.files.length} scripts, ${kb(result.bytes)}, ${kb(result.gzipped)} gzipped`);
  }
}
