// Whether dist/ was built from the sources as they are now, so that `npm start` (prestart) only
// rebuilds when something changed: a restart after a crash is downtime, and a full build (tsc,
// assets, Vite) takes a minute on a small server.
//
//   node scripts/build-stamp.mjs record   after a build: writes dist/.build-stamp
//   node scripts/build-stamp.mjs check    exits 0 when dist/ is up to date, 1 (saying why) when not
//   node scripts/build-stamp.mjs ensure   (prepare, prestart) builds when dist/ is not up to date and the
//                                         build tools are installed; never needs them when dist/ is there
//
// The stamp holds a hash of every input's content (not its time: a checkout or a copy that
// changes times but not content needs no build) and the size and time of the outputs it vouches
// for, so an output rebuilt or removed since (`npm run build:web` alone) counts as a change too.
import { spawnSync } from 'node:child_process';
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

/** Why dist/ needs a build, or null when it is up to date with the sources. */
function staleness() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return 'no record of a previous build in dist/';
  }
  const now = outputs();
  const changed = OUTPUTS.find((file) => now[file] === null || now[file] !== stamp.outputs?.[file]);
  if (changed) return `${changed} is missing or changed since the last build`;
  if (stamp.sources !== sourcesHash()) return 'the sources changed since the last build';
  return null;
}

/**
 * The build's tools are dev dependencies: a production install (`npm ci --omit=dev` on the packed
 * project, the Dockerfile, the systemd unit's folder) has none of them and needs none, since the
 * package ships dist/ built.
 */
function buildToolsInstalled() {
  return ['typescript', 'vite'].every((name) => existsSync(join('node_modules', name, 'package.json')));
}

function ensure() {
  const why = staleness();
  if (why === null) {
    console.log('kassir: dist/ is up to date with the sources: not building');
    return 0;
  }
  // A packed release holds dist/ and no sources: what it ships is what runs.
  if (!existsSync('src') && existsSync(OUTPUTS[0])) {
    console.log('kassir: a built release (dist/ without sources): not building');
    return 0;
  }
  if (buildToolsInstalled()) {
    console.log(`kassir: ${why}: building`);
    return spawnSync('npm', ['run', 'build'], { stdio: 'inherit' }).status ?? 1;
  }
  if (OUTPUTS.every(existsSync)) {
    console.log(
      `kassir: ${why}, but the build tools (dev dependencies) are not installed: running dist/ as it is. ` +
        'To rebuild, install them (npm ci) and run npm run build.',
    );
    return 0;
  }
  console.error(
    `kassir: ${why} and dist/ is incomplete, and the build tools (dev dependencies: typescript, vite) are not installed. ` +
      'Install them and build (npm ci && npm run build), or install a packed release (npm pack), which ships dist/ built.',
  );
  return 1;
}

const mode = process.argv[2];
if (mode === 'ensure') {
  process.exit(ensure());
} else if (mode === 'record') {
  writeFileSync(STAMP, `${JSON.stringify({ sources: sourcesHash(), outputs: outputs() }, null, 2)}\n`);
} else if (mode === 'check') {
  const why = staleness();
  if (why !== null) {
    console.log(`kassir: ${why}: building`);
    process.exit(1);
  }
  console.log('kassir: dist/ is up to date with the sources: not building');
} else {
  console.error('usage: node scripts/build-stamp.mjs record|check|ensure');
  process.exit(2);
}
