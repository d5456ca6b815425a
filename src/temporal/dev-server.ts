/**
 * The embedded Temporal dev server (`temporal server start-dev`), described by temporal-dev.yml.
 *
 * - `ensureDevServer()` returns the address to use: TEMPORAL_ADDRESS if set (external cluster,
 *   nothing is started), else a dev server already answering on the configured port, else a newly
 *   spawned, detached dev server (own process group, output to the log file, pid file written).
 * - `stopDevServer()` stops the server recorded in the pid file.
 * - `ensureSearchAttributes()` registers the saasbench search attributes on any cluster.
 *
 * Readiness is checked with a plain TCP connect plus a real gRPC call (never global fetch, which
 * can hang without holding the event loop open).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import YAML from 'yaml';
import { z } from 'zod';
import { repoRoot, temporalBin } from './tools';

// ---------------------------------------------------------------------------------------------
// Config

export const SEARCH_ATTRIBUTE_TYPES = ['Text', 'Keyword', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'] as const;
export type SearchAttributeTypeName = (typeof SEARCH_ATTRIBUTE_TYPES)[number];

/** temporal.api.enums.v1.IndexedValueType values. */
const INDEXED_VALUE_TYPE: Record<SearchAttributeTypeName, number> = {
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

export class DevServerConfigError extends Error {
  override readonly name = 'DevServerConfigError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid Temporal dev server config ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export class DevServerStartError extends Error {
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
      result.error.issues.flatMap((issue) => {
        if (issue.code === 'unrecognized_keys') {
          return issue.keys.map((key) => `${[...issue.path.map(String), key].join('.')}: unknown key`);
        }
        const keyPath = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
        return [`${keyPath}: ${issue.message}`];
      }),
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves true when a TCP connection to host:port succeeds within timeoutMs. */
export function tcpProbe(host: string, p: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: p });
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** Runs `fn` but gives up after ms (a ref'd timer keeps the process alive while waiting). */
async function withTimeout<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export interface ProbeResult {
  ok: boolean;
  /** A TCP listener answered on the port. */
  listening: boolean;
  reason?: string;
}

/**
 * Is a Temporal frontend answering on `address`? TCP connect, then Connection.connect +
 * getSystemInfo (+ describeNamespace when `namespace` is given), all bounded by timeoutMs.
 */
export async function probeTemporal(address: string, namespace?: string, timeoutMs = 3000): Promise<ProbeResult> {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (!m) return { ok: false, listening: false, reason: `bad address ${address}` };
  const listening = await tcpProbe(m[1]!, Number(m[2]), Math.min(timeoutMs, 1000));
  if (!listening) return { ok: false, listening: false, reason: 'connection refused' };
  let connection: Connection | undefined;
  try {
    await withTimeout(timeoutMs, `Temporal probe of ${address}`, async () => {
      connection = await Connection.connect({ address, connectTimeout: timeoutMs });
      const deadline = Date.now() + timeoutMs;
      await connection.withDeadline(deadline, () => connection!.workflowService.getSystemInfo({}));
      if (namespace) {
        await connection.withDeadline(deadline, () => connection!.workflowService.describeNamespace({ namespace }));
      }
    });
    return { ok: true, listening: true };
  } catch (err) {
    return { ok: false, listening: true, reason: (err as Error).message };
  } finally {
    if (connection) await connection.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Process helpers

function readPidFile(pidFile: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** A live process whose command line looks like `temporal server start-dev` (guards against pid reuse). */
function isDevServerProcess(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('start-dev');
  } catch {
    return true; // no /proc: cannot tell; trust the pid file
  }
}

function writeFileAtomic(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

function removePidFileIf(pidFile: string, pid: number): void {
  if (readPidFile(pidFile) === pid) fs.rmSync(pidFile, { force: true });
}

function logTail(file: string, lines = 20): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines - 1).join('\n').trim();
  } catch {
    return '(no log)';
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

// ---------------------------------------------------------------------------------------------
// ensure / stop

async function waitUntilReady(
  cfg: ResolvedDevServer,
  timeoutMs: number,
  stillRunning: () => boolean,
): Promise<ProbeResult> {
  const deadline = Date.now() + timeoutMs;
  let last: ProbeResult = { ok: false, listening: false, reason: 'not probed yet' };
  while (Date.now() < deadline) {
    last = await probeTemporal(cfg.address, cfg.namespace, 3000);
    if (last.ok) return last;
    if (!stillRunning()) return { ...last, reason: `process exited (${last.reason ?? 'unknown'})` };
    await sleep(250);
  }
  return { ...last, reason: `not ready after ${timeoutMs} ms (${last.reason ?? 'unknown'})` };
}

/**
 * Returns the Temporal endpoint to use, starting the embedded dev server if needed.
 * See the module comment for the decision order.
 */
export async function ensureDevServer(opts: DevServerOptions = {}): Promise<DevServerHandle> {
  const env = opts.env ?? process.env;
  if (!opts.ignoreTemporalAddress && env.TEMPORAL_ADDRESS) {
    return { address: env.TEMPORAL_ADDRESS, namespace: env.TEMPORAL_NAMESPACE ?? 'default', external: true, started: false };
  }
  const root = opts.root ?? repoRoot();
  const cfg = resolveDevServer({ ...opts, root });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const handle = (pid: number | undefined, started: boolean): DevServerHandle => ({
    address: cfg.address,
    namespace: cfg.namespace,
    external: false,
    started,
    uiUrl: cfg.uiUrl,
    ...(pid !== undefined && { pid }),
    logFile: cfg.logFile,
    dbFile: cfg.dbFile,
  });
  const recordedPid = (): number | undefined => {
    const pid = readPidFile(cfg.pidFile);
    return pid !== undefined && isDevServerProcess(pid) ? pid : undefined;
  };

  // 1. Already answering (ours from an earlier run, or someone else's)?
  const probe = await probeTemporal(cfg.address, cfg.namespace, 3000);
  if (probe.ok) return handle(recordedPid(), false);

  // 2. A dev server we recorded is still starting up: wait for it instead of spawning another.
  const starting = recordedPid();
  if (starting !== undefined) {
    const ready = await waitUntilReady(cfg, readyTimeoutMs, () => isAlive(starting));
    if (ready.ok) return handle(starting, false);
    throw new DevServerStartError(
      `Temporal dev server pid ${starting} (from ${cfg.pidFile}) is running but does not answer on ${cfg.address}: ` +
        `${ready.reason}. See ${cfg.logFile}; stop it with \`kill -TERM -${starting}\`.`,
    );
  }

  // 3. Something else holds the port.
  if (probe.listening) {
    // It may be a Temporal server still booting; give it a few seconds before blaming it.
    const again = await waitUntilReady(cfg, 5000, () => true);
    if (again.ok) return handle(undefined, false);
    throw new DevServerStartError(
      `port ${cfg.address} is in use by something that is not an answering Temporal server (${again.reason}). ` +
        `Free the port, change "port" in ${opts.configPath ?? defaultConfigPath(root)}, or set TEMPORAL_ADDRESS.`,
    );
  }

  // 4. Spawn.
  const bin = temporalBin({ env, root });
  const args = devServerArgs(cfg);
  fs.mkdirSync(path.dirname(cfg.dbFile), { recursive: true });
  fs.mkdirSync(path.dirname(cfg.logFile), { recursive: true });
  const logFd = fs.openSync(cfg.logFile, 'a');
  let pid: number;
  let exited = false;
  try {
    fs.writeSync(logFd, `${JSON.stringify({ saasbench: 'starting dev server', at: new Date().toISOString(), bin, args })}\n`);
    const child = spawn(bin, args, { cwd: root, detached: true, stdio: ['ignore', logFd, logFd], env });
    if (child.pid === undefined) {
      throw new DevServerStartError(`failed to spawn ${bin}; see ${cfg.logFile}`);
    }
    pid = child.pid;
    child.once('exit', () => {
      exited = true;
    });
    child.once('error', () => {
      exited = true;
    });
    child.unref();
  } finally {
    fs.closeSync(logFd);
  }
  writeFileAtomic(cfg.pidFile, `${pid}\n`);

  const ready = await waitUntilReady(cfg, readyTimeoutMs, () => !exited && isAlive(pid));
  if (ready.ok) return handle(pid, true);

  // Failed: clean up our process; maybe a concurrent caller won the port race.
  killGroup(pid, 'SIGTERM');
  if (!(await waitForExit(pid, 5000))) killGroup(pid, 'SIGKILL');
  removePidFileIf(cfg.pidFile, pid);
  const other = await probeTemporal(cfg.address, cfg.namespace, 3000);
  if (other.ok) return handle(recordedPid(), false);
  throw new DevServerStartError(
    `Temporal dev server (${bin}) did not become ready on ${cfg.address}: ${ready.reason}.\n` +
      `Log: ${cfg.logFile}\n--- last log lines ---\n${logTail(cfg.logFile)}`,
  );
}

export interface StopResult {
  stopped: boolean;
  pid?: number;
  reason?: string;
}

/** Stops the dev server recorded in the pid file (SIGTERM to its process group; SIGKILL after timeoutMs). */
export async function stopDevServer(opts: DevServerOptions & { timeoutMs?: number } = {}): Promise<StopResult> {
  const cfg = resolveDevServer(opts);
  const pid = readPidFile(cfg.pidFile);
  if (pid === undefined) return { stopped: false, reason: `no pid file at ${cfg.pidFile}` };
  if (!isDevServerProcess(pid)) {
    fs.rmSync(cfg.pidFile, { force: true });
    return { stopped: false, pid, reason: `pid ${pid} is not a running dev server (stale pid file removed)` };
  }
  killGroup(pid, 'SIGTERM');
  if (!(await waitForExit(pid, opts.timeoutMs ?? 20_000))) {
    killGroup(pid, 'SIGKILL');
    await waitForExit(pid, 5000);
  }
  removePidFileIf(cfg.pidFile, pid);
  return { stopped: true, pid };
}

// ---------------------------------------------------------------------------------------------
// Search attributes

function isAlreadyExists(err: unknown): boolean {
  const e = err as { code?: number; message?: string };
  return e?.code === 6 /* ALREADY_EXISTS */ || /already exists/i.test(e?.message ?? '');
}

/**
 * Registers the given search attributes (default: those of temporal-dev.yml) on `namespace` when
 * missing. Idempotent. Returns the names it added. Throws when a name exists with another type.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  attributes: Record<string, SearchAttributeTypeName> = loadDevServerConfig().searchAttributes,
  timeoutMs = 10_000,
): Promise<string[]> {
  const deadline = () => Date.now() + timeoutMs;
  const existing = await connection.withDeadline(deadline(), () =>
    connection.operatorService.listSearchAttributes({ namespace }),
  );
  const known: Record<string, number> = {
    ...(existing.systemAttributes ?? {}),
    ...(existing.customAttributes ?? {}),
  } as Record<string, number>;
  const missing: Record<string, number> = {};
  for (const [name, type] of Object.entries(attributes)) {
    const want = INDEXED_VALUE_TYPE[type];
    if (name in known) {
      if (known[name] !== want) {
        throw new Error(
          `search attribute ${name} exists on namespace ${namespace} with type ${known[name]} but saasbench needs ${type} (${want})`,
        );
      }
      continue;
    }
    missing[name] = want;
  }
  const names = Object.keys(missing);
  if (names.length === 0) return [];
  try {
    await connection.withDeadline(deadline(), () =>
      connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing }),
    );
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  return names;
}
