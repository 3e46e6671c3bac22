import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config.js';

// Issue 39, item 1: the deployment files (Dockerfile, compose.yaml, deploy/). This machine runs no
// container engine, so no image is built here: test/production-install.test.ts runs the install
// the Dockerfile's runtime stage runs (scripts/install-production.sh, the same file), and this
// test holds the files to what docs/operations.md says of them, parsed as their tools read them.

const ROOT = resolve(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface ComposeService {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  ports?: string[];
  healthcheck?: { test: string[] };
}

/** compose.yaml as Compose reads it (YAML merge keys resolved), with .env's variables left as written. */
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };

/** Dockerfile instructions (continuation lines joined), by stage. */
function dockerfileStages(): { name: string; instructions: string[] }[] {
  const joined = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  const stages: { name: string; instructions: string[] }[] = [];
  for (const line of joined) {
    const from = /^FROM\s+\S+\s+AS\s+(\S+)/i.exec(line);
    if (from) stages.push({ name: from[1]!, instructions: [] });
    else stages.at(-1)?.instructions.push(line.trim());
  }
  return stages;
}

describe('the image (Dockerfile)', () => {
  const [build, runtime] = dockerfileStages();

  it('builds with dev dependencies and packs the release; installs the release with scripts/install-production.sh', () => {
    expect(build!.name).toBe('build');
    expect(build!.instructions.join('\n')).toMatch(/RUN npm ci .*\n(?:.*\n)*RUN npm run build && .*npm pack --pack-destination \/release/);
    expect(runtime!.name).toBe('runtime');
    const install = runtime!.instructions.find((line) => line.includes('install-production.sh'));
    // The same script, with the same arguments, that test/production-install.test.ts runs.
    expect(install).toMatch(/^RUN sh \/tmp\/release\/install-production\.sh \/tmp\/release\/kassir-\*\.tgz \/tmp\/release\/package-lock\.json \/opt\/kassir/);
    expect(existsSync(join(ROOT, 'scripts', 'install-production.sh'))).toBe(true);
    expect(read('scripts/install-production.sh')).toMatch(/npm ci --omit=dev/);
  });

  it('runs as a non-root user, exec form, SIGTERM, a HEALTHCHECK on /readyz and the data folder on a volume', () => {
    const lines = runtime!.instructions;
    const user = lines.filter((line) => line.startsWith('USER '));
    expect(user).toEqual(['USER kassir']);
    expect(lines).toContain('STOPSIGNAL SIGTERM');
    expect(lines.find((line) => line.startsWith('HEALTHCHECK'))).toMatch(/CMD \[.*\/readyz/);
    const entrypoint = lines.find((line) => line.startsWith('ENTRYPOINT'))!;
    expect(JSON.parse(entrypoint.slice('ENTRYPOINT'.length))).toEqual(['node', 'dist/main.js']);
    expect(lines).toContain('VOLUME ["/var/lib/kassir"]');
    expect(lines.find((line) => line.startsWith('ENV '))).toMatch(/KASSIR_DATA_DIR=\/var\/lib\/kassir .*HOST=0\.0\.0\.0/);
  });

  it('keeps local data, secrets and dependencies out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.env', '.git']) expect(ignored).toContain(entry);
  });

  it('says plainly whether a container engine ran here', () => {
    let engine = false;
    try {
      execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
      engine = true;
    } catch {
      engine = false;
    }
    // Recorded in the run's output: docs/operations.md says no image was built on the project's machine.
    console.log(engine ? 'a container engine answers: docker build would run here' : 'no container engine answers (docker info): no image was built here');
    expect(read('README.md')).toMatch(/no\s+image\s+was\s+built/i);
  });
});

describe('compose.yaml', () => {
  it('runs PostgreSQL 16 on a volume, two Kassir instances on one DATABASE_URL and one receipt folder, Caddy, Prometheus and Grafana', () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual(['caddy', 'grafana', 'kassir-1', 'kassir-2', 'postgres', 'prometheus']);
    expect(services.postgres!.image).toBe('postgres:16');
    expect(services.postgres!.volumes).toEqual(['postgres-data:/var/lib/postgresql/data']);
    const [one, two] = [services['kassir-1']!, services['kassir-2']!];
    for (const instance of [one, two]) {
      expect(instance.build).toBe('.');
      expect(instance.environment!.DATABASE_URL).toMatch(/^postgres:\/\/kassir:\$\{POSTGRES_PASSWORD.*\}@postgres:5432\/kassir$/);
      expect(instance.environment!.PUBLIC_BASE_URL).toMatch(/^https:\/\/\$\{KASSIR_DOMAIN/);
      expect(instance.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    }
    expect(one.environment).toEqual(two.environment);
    expect(one.volumes).toEqual(['kassir-data:/var/lib/kassir']);
    expect(two.volumes).toEqual(one.volumes);
    // What the instances are told about the proxy is a value the service accepts.
    const env = Object.fromEntries(Object.entries(one.environment!).filter(([, value]) => !value.includes('${')));
    expect(loadConfig(env).trustProxy).toBe('uniquelocal');
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['postgres-data', 'kassir-data', 'caddy-data']));
  });

  it('Caddy balances both instances with TLS for the public name; Prometheus scrapes both; Grafana gets the dashboard', () => {
    const caddy = compose.services.caddy!;
    expect(caddy.ports).toEqual(expect.arrayContaining(['80:80', '443:443']));
    expect(caddy.volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = read('deploy/Caddyfile');
    expect(caddyfile).toMatch(/^\{\$KASSIR_DOMAIN\} \{/m);
    expect(caddyfile).toMatch(/reverse_proxy kassir-1:8080 kassir-2:8080 \{/);
    expect(caddyfile).toMatch(/health_uri \/readyz/);

    const prometheus = parse(read('deploy/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; authorization: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
    };
    expect(prometheus.scrape_configs[0]!.static_configs[0]!.targets).toEqual(['kassir-1:8080', 'kassir-2:8080']);
    expect(prometheus.rule_files).toEqual(['/etc/prometheus/kassir/*.rules.yml']);
    expect(compose.services.prometheus!.volumes).toEqual(
      expect.arrayContaining(['./docs:/etc/prometheus/kassir:ro', './deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro']),
    );
    expect(compose.services.prometheus!.volumes).toContain(`./deploy/metrics_token:${prometheus.scrape_configs[0]!.authorization.credentials_file}:ro`);

    const grafana = compose.services.grafana!;
    expect(grafana.volumes).toEqual(
      expect.arrayContaining([
        './docs/grafana-dashboard.json:/var/lib/grafana/dashboards/kassir.json:ro',
        './deploy/grafana/provisioning:/etc/grafana/provisioning:ro',
      ]),
    );
    const provider = parse(read('deploy/grafana/provisioning/dashboards/kassir.yml')) as { providers: { options: { path: string } }[] };
    expect(provider.providers[0]!.options.path).toBe('/var/lib/grafana/dashboards');
    const datasource = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: { type: string; url: string; isDefault: boolean }[];
    };
    expect(datasource.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true });
    // The dashboard's data source variable picks the default Prometheus.
    const dashboard = JSON.parse(read('docs/grafana-dashboard.json')) as { templating: { list: { name: string; type: string; query: string }[] } };
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', query: 'prometheus' }));
  });
});

describe('deploy/kassir.service (systemd)', () => {
  it('runs the installed release as the kassir user from an EnvironmentFile, restarts on failure, hardened', () => {
    const unit = read('deploy/kassir.service');
    const settings = unit.split('\n').filter((line) => /^[A-Za-z]+=/.test(line));
    for (const setting of [
      'User=kassir',
      'EnvironmentFile=/etc/kassir/kassir.env',
      'ExecStart=/usr/bin/node /opt/kassir/dist/main.js',
      'Restart=on-failure',
      'KillSignal=SIGTERM',
      'NoNewPrivileges=true',
      'ProtectSystem=strict',
      'ProtectHome=true',
      'PrivateTmp=true',
      'ReadWritePaths=/var/lib/kassir',
      'StateDirectory=kassir',
    ]) {
      expect(settings).toContain(setting);
    }
    // V8 compiles code at run time: a unit that forbids writable executable memory cannot run Node.
    expect(unit).not.toMatch(/^MemoryDenyWriteExecute=true/m);
  });
});
