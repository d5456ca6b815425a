/** temporal-dev.yml: how `saasbench server` starts the embedded dev server, and the argv it runs. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { repoRoot } from '../paths';
import { zodIssuePaths } from '../zod-issues';
import { SaasbenchError } from '../errors';


// ---------------------------------------------------------------------------------------------
// Config

export const SEARCH_ATTRIBUTE_TYPES = ['Text', 'Keyword', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'] as const;
export type SearchAttributeTypeName = (typeof SEARCH_ATTRIBUTE_TYPES)[number];

/** temporal.api.enums.v1.IndexedValueType values. */
export const INDEXED_VALUE_TYPE: Record<SearchAttributeTypeName, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

const port = z.number().int().min(1).max(65535);

export const DevServerConfigSchema = z.strictObject({
  ip: z.string().min(1).default('127.0.0.1'),
  port: port.default(7233),
  uiPort: port.default(8233),
  namespace: z.string().min(1).default('default'),
  dbFile: z.string().min(1).default('.saasbench/temporal/dev.db'),
  logFile: z.string().min(1).default('.saasbench/logs/temporal.log'),
  pidFile: z.string().min(1).default('.saasbench/temporal/dev.pid'),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('warn'),
  searchAttributes: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an identifier'), z.enum(SEARCH_ATTRIBUTE_TYPES))
    .default({}),
});
export type DevServerConfig = z.infer<typeof DevServerConfigSchema>;

export class DevServerConfigError extends SaasbenchError {
  static override readonly nonRetryable = true;
  override readonly name = 'DevServerConfigError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid Temporal dev server config ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export class DevServerStartError extends SaasbenchError {
  static override readonly nonRetryable = false;
  override readonly name = 'DevServerStartError';
}

export function defaultConfigPath(root: string = repoRoot()): string {
  return path.join(root, 'temporal-dev.yml');
}

/** Parses and validates the YAML text of a temporal-dev.yml; `file` is only used in errors. */
export function parseDevServerConfig(text: string, file: string): DevServerConfig {
  let raw: unknown;
  try {
    raw = YAML.parse(text, { prettyErrors: true });
  } catch (err) {
    throw new DevServerConfigError(file, [`invalid YAML: ${(err as Error).message}`]);
  }
  if (raw === null || raw === undefined) raw = {};
  const result = DevServerConfigSchema.safeParse(raw);
  if (!result.success) {
    throw new DevServerConfigError(
      file,
      zodIssuePaths(result.error).map((i) => `${i.path || '(top level)'}: ${i.message}`),
    );
  }
  return result.data;
}

export function loadDevServerConfig(file: string = defaultConfigPath()): DevServerConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new DevServerConfigError(file, [`cannot read: ${(err as Error).message}`]);
  }
  return parseDevServerConfig(text, file);
}

// ---------------------------------------------------------------------------------------------
// Options and results

export interface DevServerOptions {
  /** temporal-dev.yml to read (default: <repo root>/temporal-dev.yml). */
  configPath?: string;
  /** Overrides of config values (paths relative to the repo root or absolute). */
  ip?: string;
  port?: number;
  uiPort?: number;
  namespace?: string;
  dbFile?: string;
  logFile?: string;
  pidFile?: string;
  logLevel?: DevServerConfig['logLevel'];
  searchAttributes?: Record<string, SearchAttributeTypeName>;
  /** How long to wait for a spawned server to answer (default 60 s). */
  readyTimeoutMs?: number;
  /** Environment (default process.env); TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_BIN are read. */
  env?: NodeJS.ProcessEnv;
  /** Ignore TEMPORAL_ADDRESS (always use the dev server). */
  ignoreTemporalAddress?: boolean;
  /** Repo root (default repoRoot()). */
  root?: string;
}

export interface ResolvedDevServer extends DevServerConfig {
  /** Absolute paths. */
  dbFile: string;
  logFile: string;
  pidFile: string;
  address: string;
  uiUrl: string;
}

export interface DevServerHandle {
  address: string;
  namespace: string;
  /** True when the address came from TEMPORAL_ADDRESS: nothing was started or checked. */
  external: boolean;
  /** True when this call spawned the server. */
  started: boolean;
  uiUrl?: string;
  pid?: number;
  logFile?: string;
  dbFile?: string;
}

function hostPort(ip: string, p: number): string {
  return ip.includes(':') && !ip.startsWith('[') ? `[${ip}]:${p}` : `${ip}:${p}`;
}

export function resolveDevServer(opts: DevServerOptions = {}): ResolvedDevServer {
  const root = opts.root ?? repoRoot();
  const cfg = loadDevServerConfig(opts.configPath ?? defaultConfigPath(root));
  const merged: DevServerConfig = {
    ...cfg,
    ...(opts.ip !== undefined && { ip: opts.ip }),
    ...(opts.port !== undefined && { port: opts.port }),
    ...(opts.uiPort !== undefined && { uiPort: opts.uiPort }),
    ...(opts.namespace !== undefined && { namespace: opts.namespace }),
    ...(opts.dbFile !== undefined && { dbFile: opts.dbFile }),
    ...(opts.logFile !== undefined && { logFile: opts.logFile }),
    ...(opts.pidFile !== undefined && { pidFile: opts.pidFile }),
    ...(opts.logLevel !== undefined && { logLevel: opts.logLevel }),
    ...(opts.searchAttributes !== undefined && { searchAttributes: opts.searchAttributes }),
  };
  return {
    ...merged,
    dbFile: path.resolve(root, merged.dbFile),
    logFile: path.resolve(root, merged.logFile),
    pidFile: path.resolve(root, merged.pidFile),
    address: hostPort(merged.ip, merged.port),
    uiUrl: `http://${hostPort(merged.ip, merged.uiPort)}`,
  };
}

/** The argv (after the binary) for `temporal server start-dev` (CLI 1.9.x flag names). */
export function devServerArgs(cfg: ResolvedDevServer): string[] {
  const args = [
    'server',
    'start-dev',
    '--ip',
    cfg.ip,
    '--port',
    String(cfg.port),
    '--ui-port',
    String(cfg.uiPort),
    '--ui-disable-news-fetch',
    '--db-filename',
    cfg.dbFile,
    '--log-format',
    'json',
    '--log-level',
    cfg.logLevel,
  ];
  // "default" always exists; asking for it again is harmless but noisy.
  if (cfg.namespace !== 'default') args.push('--namespace', cfg.namespace);
  for (const [name, type] of Object.entries(cfg.searchAttributes)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  return args;
}

// ---------------------------------------------------------------------------------------------
// Readiness probes (plain net + a real gRPC call)

