// Whether dist/ was built from the sources as they are now, so that `npm start` (prestart) only
// rebuilds when something changed: a restart after a crash is downtime, and a full build (tsc,
// assets, Vite) takes a minute on a small server.
//
//   node scripts/build-stamp.mjs record   after a build: writes dist/.build-stamp
//   node scripts/build-stamp.mjs check    exits 0 when dist/ is up to date, 1 (saying why) when not
//
// The stamp holds a hash of every input's content (not its time: a checkout or a copy that
// changes times but not content needs no build) and the size and time of the outputs it vouches
// for, so an output rebuilt or removed since (`npm run build:web` alone) counts as a change too.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What `npm run build` reads (besides node_modules, which package-lock.json stands for). */
const INPUTS = ['src', 'web', 'scripts/copy-assets.mjs', 'tsconfig.json', 'package.json', 'package-lock.json'];
/** What `npm start` runs and serves. */
const OUTPUTS = ['dist/main.js', 'dist/cli.js', 'dist/console/index.html'];
const STAMP = join('dist', '.build-stamp');

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

function sourcesHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(files)) hash.update(`${file}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

function outputs() {
  return Object.fromEntries(
    OUTPUTS.map((file) => {
      const stat = statSync(file, { throwIfNoEntry: false });
      return [file, stat ? `${stat.size}:${stat.mtimeMs}` : null];
    }),
  );
}

const mode = process.argv[2];
if (mode === 'record') {
  writeFileSync(STAMP, `${JSON.stringify({ sources: sourcesHash(), outputs: outputs() }, null, 2)}\n`);
} else if (mode === 'check') {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    console.log('kassir: no record of a previous build in dist/: building');
    process.exit(1);
  }
  const now = outputs();
  const changed = OUTPUTS.find((file) => now[file] === null || now[file] !== stamp.outputs?.[file]);
  if (changed) {
    console.log(`kassir: ${changed} is missing or changed since the last build: building`);
    process.exit(1);
  }
  if (stamp.sources !== sourcesHash()) {
    console.log('kassir: the sources changed since the last build: building');
    process.exit(1);
  }
  console.log('kassir: dist/ is up to date with the sources: not building');
} else {
  console.error('usage: node scripts/build-stamp.mjs record|check');
  process.exit(2);
}
