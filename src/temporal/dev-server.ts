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
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporalBin } from './tools';
import { repoRoot } from '../paths';
import {
  devServerArgs,
  loadDevServerConfig,
  resolveDevServer,
  DevServerStartError,
  defaultConfigPath,
  INDEXED_VALUE_TYPE,
  type DevServerOptions,
  type DevServerHandle,
  type SearchAttributeTypeName,
} from './dev-server-config';
import { probeTemporal } from './dev-server-probe';
import { isAlive, isDevServerProcess, killGroup, logTail, readPidFile, removePidFileIf, waitForExit, waitUntilReady, writeFileAtomic } from './dev-server-process';

export * from './dev-server-config';
export { tcpProbe, probeTemporal, type ProbeResult } from './dev-server-probe';

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

