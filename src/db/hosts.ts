import { Socket } from 'node:net';
import pg from 'pg';

/**
 * DATABASE_URL naming several hosts, as libpq reads it (DESIGN.md "Runtime contract"):
 * `postgres://user@h1:5432,h2:5433/kassir?target_session_attrs=read-write`. node-postgres connects
 * to one host only, so Kassir keeps the list itself: every new connection goes to the host last
 * found to accept writes, and when a connection to it fails (the primary died) or it turns out
 * read-only (a standby, or an old primary come back as one), the hosts are probed in the listed
 * order for the one that accepts writes now — a promoted standby — and connections go there.
 *
 * A URL with one host and no target_session_attrs is handed to node-postgres untouched.
 */

/** libpq's target_session_attrs values Kassir honours: any host, or only one that accepts writes. */
type SessionAttrs = 'any' | 'read-write';

export interface DatabaseHosts {
  /** One single-host connection string per listed host, in the listed order. */
  urls: string[];
  attrs: SessionAttrs;
}

/** How long a probe of one host may take before the next is tried. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Splits a libpq-style URL into one URL per host (IPv6 hosts in brackets; a host without a port
 * takes the URL's last port, as libpq does, or 5432). Throws on an unknown target_session_attrs:
 * Kassir writes, so it cannot be told to prefer a standby.
 */
export function parseDatabaseHosts(url: string): DatabaseHosts {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/i.exec(url);
  if (!match) return { urls: [url], attrs: 'any' };
  const [, scheme, userinfo, hostList, tail] = match as unknown as [string, string, string | undefined, string, string];
  const [path, query = ''] = splitOnce(tail, '?');
  const params = new URLSearchParams(query);
  const wanted = params.get('target_session_attrs') ?? 'any';
  params.delete('target_session_attrs');
  let attrs: SessionAttrs;
  if (wanted === 'any') attrs = 'any';
  else if (wanted === 'read-write' || wanted === 'primary') attrs = 'read-write';
  else throw new Error(`DATABASE_URL: target_session_attrs=${wanted} is not supported; Kassir writes, so use read-write (or primary, or any)`);
  const hosts = hostList.split(',').filter((h) => h !== '');
  if (hosts.length === 0) return { urls: [url], attrs };
  const ports = hosts.map((h) => /^(?:\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(h)?.[1]);
  const lastPort = [...ports].reverse().find((p) => p !== undefined) ?? '5432';
  const rest = params.toString();
  const urls = hosts.map((host, i) => {
    const withPort = ports[i] === undefined ? `${host}:${lastPort}` : host;
    return `${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${withPort}${path}${rest ? `?${rest}` : ''}`;
  });
  return { urls, attrs };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** Whether a URL needs the host list kept by Kassir (several hosts, or a session attribute to check). */
export function needsHostList(hosts: DatabaseHosts): boolean {
  return hosts.urls.length > 1 || hosts.attrs !== 'any';
}

/** A connection refused for the session attribute: the host answers, but does not accept writes. */
export class ReadOnlyHostError extends Error {
  constructor(readonly url: string) {
    super(`the database host ${redact(url)} does not accept writes (a standby); looking for the one that does`);
    this.name = 'ReadOnlyHostError';
  }
}

/** A URL with its password removed, for messages. */
export function redact(url: string): string {
  return url.replace(/(:\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}

/**
 * The hosts of one DATABASE_URL and the one connections go to now. Shared by every pool and
 * listening connection of the process for that URL (hostsFor), so that one probe moves them all.
 */
export class HostList {
  private index = 0;
  private probing: Promise<void> | undefined;

  constructor(readonly hosts: DatabaseHosts) {}

  /** The single-host connection string new connections use now. */
  get current(): string {
    return this.hosts.urls[this.index]!;
  }

  /** Checks a freshly opened connection against the session attribute. */
  async check(client: pg.Client, url: string): Promise<void> {
    if (this.hosts.attrs !== 'read-write') return;
    const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
    if (rows[0]?.transaction_read_only !== 'off') throw new ReadOnlyHostError(url);
  }

  /**
   * The host `url` failed (could not connect, or was read-only): probes the hosts in order, from
   * the first, for one that accepts a connection and, when asked, writes, and sends new
   * connections there. Concurrent failures share one probe. Resolves either way: when none
   * answers, connections keep failing (503 to requests) and the next failure probes again.
   */
  relocate(failedUrl: string): Promise<void> {
    if (failedUrl !== this.current) return this.probing ?? Promise.resolve();
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /** Finds the host to use before the first connection (at start, the first listed may be a standby). */
  async locate(): Promise<void> {
    await this.probe();
  }

  private async probe(): Promise<void> {
    for (const [i, url] of this.hosts.urls.entries()) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await this.check(client, url);
        this.index = i;
        return;
      } catch {
        // down, or a standby: the next one
      } finally {
        // Not awaited: a client whose connection failed has already ended, and never says so again.
        client.end().catch(() => undefined);
      }
    }
  }
}

const lists = new Map<string, HostList>();

/**
 * Finds the host that accepts writes before the service's first connection (the first listed may
 * be a standby now); nothing to do for a single-host URL.
 */
export async function locateWritableHost(url: string): Promise<void> {
  await hostsFor(url)?.locate();
}

/** The process's one HostList for `url`, or undefined when the URL names one host and no attribute. */
export function hostsFor(url: string): HostList | undefined {
  const hosts = parseDatabaseHosts(url);
  if (!needsHostList(hosts)) return undefined;
  let list = lists.get(url);
  if (!list) {
    list = new HostList(hosts);
    lists.set(url, list);
  }
  return list;
}

/**
 * A node-postgres Client class for pools that connects to the HostList's current host, checks the
 * session attribute, and on failure has the list probed before it reports the failure (the
 * request that met it answers 503 and is retried; the next connection goes to the new host).
 */
export function clientClassFor(list: HostList): typeof pg.Client {
  return class FailoverClient extends pg.Client {
    private readonly url: string;

    constructor(config?: string | pg.ClientConfig) {
      const url = list.current;
      super({ ...(typeof config === 'object' ? config : {}), connectionString: url });
      this.url = url;
    }

    // node-postgres's Pool calls connect(callback); everyone else awaits it.
    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | undefined {
      const connecting = this.connectChecked().then(() => this as pg.Client);
      if (!callback) return connecting;
      const done = callback as (err: Error | null, c?: pg.Client) => void;
      connecting.then(
        (client) => done(null, client),
        (err: Error) => done(err),
      );
      return undefined;
    }

    private async connectChecked(): Promise<void> {
      try {
        await super.connect();
        await list.check(this, this.url);
      } catch (err) {
        // Not awaited: a client whose connection failed has already ended, and never says so again.
        this.end().catch(() => undefined);
        await list.relocate(this.url);
        throw err;
      }
    }
  };
}

/**
 * Connection settings for a long-lived listening connection (db/listen.ts) whose reconnections go
 * to the HostList's current host. pg-listen copies its settings once and builds every new client
 * from that copy, so the host cannot be a setting: the socket node-postgres opens is ours, and
 * connects wherever the list points at that moment (user, password and database are the same on
 * every host, from the first URL).
 */
export function followingConfig(list: HostList): pg.ClientConfig {
  return {
    connectionString: list.hosts.urls[0],
    stream: () => {
      const socket = new Socket();
      const connect = socket.connect.bind(socket) as (...args: unknown[]) => Socket;
      socket.connect = ((..._ignored: unknown[]) => {
        const { host, port } = hostOf(list.current);
        return host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
      }) as typeof socket.connect;
      return socket;
    },
  };
}

/** The host and port a single-host URL names (node-postgres's own reading of it). */
function hostOf(url: string): { host: string; port: number } {
  const client = new pg.Client({ connectionString: url });
  return { host: client.host, port: client.port };
}
