/**
 * The agent CLIs, installed once per worker host at pinned versions and copied read-only into each
 * rollout's app container. Each driver declares its pin (a CliPin: npm package, default version,
 * the env variables that override version and binary, where the native binary sits); the paper's
 * versions are the defaults (claude-code/, codex/). Lookup order: the explicit binary
 * (SAASBENCH_<AGENT>_BIN), the project's own node_modules (the pinned devDependencies) when the
 * version matches, then `.saasbench/agents/<agent>-<version>/` (installed there with `npm i` on
 * first use, under a lock).
 *
 * Only the native binaries are used: the task images have no node. A candidate must be > 4 KB:
 * npm stubs (a postinstall that did not run) are a few hundred bytes.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentConfigError } from '../errors';
import type { SandboxBackend } from '../sandbox/backend';
import { repoRoot } from '../paths';

const execFileP = promisify(execFile);

/**
 * One agent CLI's install facts; each driver folder declares its own (the `cli` of its AgentDriver),
 * so this module knows no agent by name.
 */
export interface CliPin {
  /** the agent's name (install folder `.saasbench/agents/<agent>-<version>/`) */
  agent: string;
  pkg: string;
  defaultVersion: string;
  versionEnv: string;
  binEnv: string;
  /** name of the binary inside the container */
  name: string;
  /** where the native binary may sit under an install root's node_modules, in preference order */
  candidates(nodeModules: string, arch: string): string[];
}

/** Where binaries live inside the app container (root-owned, mode 555). */
export const CONTAINER_BIN_DIR = '/opt/saasbench/bin';

export interface ResolvedBinary {
  agent: string;
  /** the binary's name inside the container */
  name: string;
  /** the pinned version (or "custom" for an explicit SAASBENCH_*_BIN) */
  version: string;
  path: string;
  size: number;
  source: 'env' | 'project' | 'agents-dir';
}

export function wantedVersion(pin: CliPin): string {
  return process.env[pin.versionEnv]?.trim() || pin.defaultVersion;
}

const cache = new Map<string, Promise<ResolvedBinary>>();

/** Resolve (installing on first use) the native binary of the pinned CLI on this worker host. */
export function ensureAgentBinary(pin: CliPin): Promise<ResolvedBinary> {
  const key = `${pin.agent}@${wantedVersion(pin)}@${process.env[pin.binEnv] ?? ''}`;
  let p = cache.get(key);
  if (!p) {
    p = resolveOrInstall(pin).catch((err) => {
      cache.delete(key);
      throw err;
    });
    cache.set(key, p);
  }
  return p;
}

async function resolveOrInstall(pin: CliPin): Promise<ResolvedBinary> {
  const { agent, name } = pin;
  const explicit = process.env[pin.binEnv]?.trim();
  if (explicit) {
    if (!existsSync(explicit)) throw new AgentConfigError(`${pin.binEnv}=${explicit}: no such file`);
    return { agent, name, version: process.env[pin.versionEnv]?.trim() || 'custom', path: explicit, size: statSync(explicit).size, source: 'env' };
  }
  const version = wantedVersion(pin);
  const project = repoRoot();
  if (installedVersion(project, pin.pkg) === version) {
    const path = nativeBinary(pin, project);
    if (path) return { agent, name, version, path, size: statSync(path).size, source: 'project' };
  }
  const dir = join(project, '.saasbench', 'agents', `${agent}-${version}`);
  if (installedVersion(dir, pin.pkg) !== version || !nativeBinary(pin, dir)) await npmInstall(dir, `${pin.pkg}@${version}`);
  const path = nativeBinary(pin, dir);
  if (!path) throw new AgentConfigError(`${pin.pkg}@${version} installed in ${dir} but no native binary was found for ${process.platform}-${process.arch}`);
  return { agent, name, version, path, size: statSync(path).size, source: 'agents-dir' };
}

function installedVersion(root: string, pkg: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/** The native binary inside an npm install root, or null. Stubs (a few hundred bytes) do not count. */
export function nativeBinary(pin: CliPin, root: string): string | null {
  const isFile = (p: string) => {
    try {
      const st = statSync(p);
      return st.isFile() && st.size >= 4097;
    } catch {
      return false;
    }
  };
  return pin.candidates(join(root, 'node_modules'), process.arch).find(isFile) ?? null;
}

async function npmInstall(dir: string, spec: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, '.install-lock');
  // one installer per host: mkdir is atomic; a stale lock (older than 10 min) is broken
  for (let waited = 0; ; waited += 1000) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      if (waited > 900_000) throw new AgentConfigError(`timed out waiting for another install of ${spec} in ${dir}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    if (!existsSync(join(dir, 'package.json'))) {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'saasbench-agent-runtime', private: true }) + '\n');
    }
    await execFileP('npm', ['install', '--prefix', dir, '--save-exact', '--no-audit', '--no-fund', '--foreground-scripts', spec], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    throw new AgentConfigError(`npm install ${spec} into ${dir} failed: ${(err as Error).message.split('\n').slice(0, 6).join(' | ')}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Copy the binary into the container at /opt/saasbench/bin/<name>, root-owned, mode 555. Skipped
 * when a file of the same size is already there (an activity retry). Returns the container path.
 */
export async function installIntoContainer(sandbox: SandboxBackend, container: string, bin: ResolvedBinary): Promise<string> {
  const dest = `${CONTAINER_BIN_DIR}/${bin.name}`;
  const have = await sandbox.exec(container, ['sh', '-c', `stat -c %s ${dest} 2>/dev/null || echo 0`]);
  if (Number(have.stdout.trim()) === bin.size) return dest;
  // streamed from the host file (the binaries are ~100-200 MB); missing parents are created 0755
  await sandbox.writeFiles(container, CONTAINER_BIN_DIR, [{ path: bin.name, hostFile: bin.path, mode: 0o555 }]);
  return dest;
}
