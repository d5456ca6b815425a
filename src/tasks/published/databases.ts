import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InputIssue } from '../../errors';
import type { ComposeProject } from '../../sandbox/compose-schema';
import { parseDotenv } from '../../sandbox/interpolate';
import { isLoopbackHost } from '../../net-address';
import type { Dag } from '../../model/dag';
import type { DatabaseTarget } from '../../model/database';
import type { RawCompose } from './compose';

/**
 * The databases of a published task, read from its compose file: each database server service
 * (by image: postgres/pgvector/postgis, mysql, mariadb, mongo, clickhouse) with the credentials its
 * entrypoint variables create (POSTGRES_*, MYSQL_* / MARIADB_*, MONGO_INITDB_*, CLICKHOUSE_*).
 * A MongoDB that runs inside another service (ygamciur's app) is found through a `mongodb://`
 * URL to localhost in that service's environment. The first SQL or MongoDB server is the primary
 * database; the others are named by their service (orghjavi's P08 `db: "clickhouse"`).
 */
type Env = Record<string, string>;

/** A compose env_file, read with compose's rules (the sandbox's parser); missing → {}. */
function readEnvFile(file: string): Env {
  return existsSync(file) ? parseDotenv(readFileSync(file, 'utf8')) : {};
}

/** `${X}`, `${X:-d}`, `${X-d}`, `$X` from `vars` (compose interpolation, enough for credentials). */
function interpolate(s: string, vars: Env): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a: string, op: string | undefined, d: string | undefined, b: string | undefined) => {
    const v = vars[a ?? b!];
    if (op === ':-') return v ? v : (d ?? '');
    if (op === '-') return v !== undefined ? v : (d ?? '');
    return v ?? '';
  });
}

function rawEnv(svc: Record<string, unknown>, dockerDir: string, vars: Env): Env {
  const env: Env = {};
  const files = svc.env_file === undefined ? [] : Array.isArray(svc.env_file) ? svc.env_file : [svc.env_file];
  for (const f of files) {
    const path = typeof f === 'string' ? f : (f as { path?: string })?.path;
    if (typeof path !== 'string') continue;
    const abs = join(dockerDir, path);
    Object.assign(env, readEnvFile(existsSync(abs) ? abs : `${abs}.example`));
  }
  const e = svc.environment;
  if (Array.isArray(e)) {
    for (const item of e) {
      const [k, ...rest] = String(item).split('=');
      if (rest.length) env[k] = interpolate(rest.join('='), vars);
    }
  } else if (e && typeof e === 'object') {
    for (const [k, v] of Object.entries(e)) if (v !== null && typeof v !== 'object') env[k] = interpolate(String(v), vars);
  }
  return env;
}

function fromUrl(url: string): { user: string; password: string; host: string; port: number; name: string; authSource?: string } | undefined {
  try {
    const u = new URL(url);
    const authSource = u.searchParams.get('authSource') ?? undefined;
    return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), host: u.hostname, port: Number(u.port || 27017), name: u.pathname.replace(/^\//, ''), authSource };
  } catch {
    return undefined;
  }
}

function serverOf(service: string, image: string, env: Env, allEnv: Env[]): DatabaseTarget | undefined {
  const img = image.toLowerCase();
  if (/postgres|pgvector|postgis|timescale/.test(img)) {
    const user = env.POSTGRES_USER || 'postgres';
    return { kind: 'postgres', service, port: 5432, user, password: env.POSTGRES_PASSWORD ?? '', name: env.POSTGRES_DB || user };
  }
  if (/mariadb|mysql|percona/.test(img)) {
    const v = (k: string) => env[`MARIADB_${k}`] ?? env[`MYSQL_${k}`];
    const user = v('USER');
    if (!user && !v('ROOT_PASSWORD')) return undefined;
    return { kind: 'mysql', service, port: 3306, user: user || 'root', password: (user ? v('PASSWORD') : v('ROOT_PASSWORD')) ?? '', name: v('DATABASE') ?? 'mysql' };
  }
  if (/clickhouse/.test(img)) {
    return { kind: 'clickhouse', service, port: 8123, user: env.CLICKHOUSE_USER || 'default', password: env.CLICKHOUSE_PASSWORD ?? '', name: env.CLICKHOUSE_DB || 'default' };
  }
  if (/(^|\/)mongo(:|$)/.test(img)) {
    // the database name: MONGO_INITDB_DATABASE, else the path of a client URL that names this service
    const url = allEnv.flatMap((e) => Object.values(e)).map((v) => (v.startsWith('mongodb://') ? fromUrl(v) : undefined)).find((u) => u && u.host === service);
    const root = env.MONGO_INITDB_ROOT_USERNAME;
    return { kind: 'mongodb', service, port: 27017, user: root ?? '', password: root ? (env.MONGO_INITDB_ROOT_PASSWORD ?? '') : '', name: env.MONGO_INITDB_DATABASE || url?.name || 'test', auth_source: 'admin' };
  }
  return undefined;
}

export function publishedDatabases(raw: RawCompose, project: ComposeProject | undefined, dockerDir: string): { database?: DatabaseTarget; databases?: Record<string, DatabaseTarget> } {
  const vars: Env = { ...readEnvFile(join(dockerDir, '.env.example')), ...readEnvFile(join(dockerDir, '.env')) };
  const services = Object.entries(raw.services ?? {});
  const envOf = (name: string, svc: Record<string, unknown>): Env => project?.services[name]?.environment ?? rawEnv(svc, dockerDir, vars);
  const envs = services.map(([name, svc]) => envOf(name, svc as Record<string, unknown>));
  const found: DatabaseTarget[] = [];
  services.forEach(([name, svc], i) => {
    const image = interpolate(String((svc as { image?: unknown }).image ?? ''), vars);
    const db = serverOf(name, image, envs[i], envs);
    if (db) found.push(db);
  });
  if (!found.some((d) => d.kind === 'mongodb')) {
    // a MongoDB inside a service: a mongodb:// URL to localhost in its environment
    services.forEach(([name], i) => {
      for (const v of Object.values(envs[i])) {
        const u = v.startsWith('mongodb://') ? fromUrl(v) : undefined;
        if (u && isLoopbackHost(u.host) && !found.some((d) => d.service === name && d.kind === 'mongodb')) {
          found.push({ kind: 'mongodb', service: name, port: u.port, user: u.user, password: u.password, name: u.name || 'test', auth_source: u.authSource ?? 'admin' });
        }
      }
    });
  }
  const primary = found.find((d) => d.kind !== 'clickhouse') ?? found[0];
  const rest = found.filter((d) => d !== primary);
  return { ...(primary ? { database: primary } : {}), ...(rest.length ? { databases: Object.fromEntries(rest.map((d) => [d.service, d])) } : {}) };
}

const DB_TYPES = ['P08', 'P09', 'P10', 'P11'];

/** A step's `database` must name one of the task's databases. */
export function databaseNameIssues(dag: Dag, databases: Record<string, DatabaseTarget> | undefined, file: string): InputIssue[] {
  const issues: InputIssue[] = [];
  dag.nodes.forEach((n, i) =>
    n.chain.forEach((s, j) => {
      const name = (s.inputs as { database?: unknown }).database;
      if (!DB_TYPES.includes(s.type.toUpperCase()) || typeof name !== 'string' || databases?.[name]) return;
      issues.push({ file, path: `nodes[${i}].primitive_chain[${j}].inputs.database`, nodeId: n.id, message: `no database named "${name}" in this task (found: ${Object.keys(databases ?? {}).join(', ') || 'only the primary'})` });
    }),
  );
  return issues;
}
