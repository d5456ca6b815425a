/**
 * The agent CLIs, installed once per worker host at pinned versions and copied read-only into each
 * rollout's app container.
 *
 * Defaults are the paper's versions (Claude Code 2.1.126, Codex CLI 0.128.0); override with
 * SAASBENCH_CLAUDE_CODE_VERSION / SAASBENCH_CODEX_VERSION, or point at a native binary directly
 * with SAASBENCH_CLAUDE_CODE_BIN / SAASBENCH_CODEX_BIN. Lookup order: the explicit binary, the
 * project's own node_modules (the pinned devDependencies) when the version matches, then
 * `.saasbench/agents/<agent>-<version>/` (installed there with `npm i` on first use, under a lock).
 *
 * Only the native binaries are used: the task images have no node. Claude Code's `bin/claude.exe`
 * is the real binary only when its postinstall ran (else a ~500-byte stub), so it must be > 4 KB,
 * else the platform package's `claude` is used. Codex keeps its binary at
 * `vendor/<triple>/codex/codex` (0.128) or `vendor/<triple>/bin/codex` (0.171).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentConfigError } from '../errors';
import type { SandboxBackend } from '../sandbox/backend';
import { repoRoot } from '../paths';

const execFileP = promisify(execFile);

export type CliAgent = 'claude-code' | 'codex';

interface Pin {
  pkg: string;
  defaultVersion: string;
  versionEnv: string;
  binEnv: string;
  /** name of the binary inside the container */
  name: string;
}

export const PINS: Record<CliAgent, Pin> = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', defaultVersion: '2.1.126', versionEnv: 'SAASBENCH_CLAUDE_CODE_VERSION', binEnv: 'SAASBENCH_CLAUDE_CODE_BIN', name: 'claude' },
  codex: { pkg: '@openai/codex', defaultVersion: '0.128.0', versionEnv: 'SAASBENCH_CODEX_VERSION', binEnv: 'SAASBENCH_CODEX_BIN', name: 'codex' },
};

/** Where binaries live inside the app container (root-owned, mode 555). */
export const CONTAINER_BIN_DIR = '/opt/saasbench/bin';

export interface ResolvedBinary {
  agent: CliAgent;
  /** the pinned version (or "custom" for an explicit SAASBENCH_*_BIN) */
  version: string;
  path: string;
  size: number;
  source: 'env' | 'project' | 'agents-dir';
}

export function wantedVersion(agent: CliAgent): string {
  return process.env[PINS[agent].versionEnv]?.trim() || PINS[agent].defaultVersion;
}

const cache = new Map<string, Promise<ResolvedBinary>>();

/** Resolve (installing on first use) the native binary of the pinned CLI on this worker host. */
export function ensureAgentBinary(agent: CliAgent): Promise<ResolvedBinary> {
  const key = `${agent}@${wantedVersion(agent)}@${process.env[PINS[agent].binEnv] ?? ''}`;
  let p = cache.get(key);
  if (!p) {
    p = resolveOrInstall(agent).catch((err) => {
      cache.delete(key);
      throw err;
    });
    cache.set(key, p);
  }
  return p;
}

async function resolveOrInstall(agent: CliAgent): Promise<ResolvedBinary> {
  const pin = PINS[agent];
  const explicit = process.env[pin.binEnv]?.trim();
  if (explicit) {
    if (!existsSync(explicit)) throw new AgentConfigError(`${pin.binEnv}=${explicit}: no such file`);
    return { agent, version: process.env[pin.versionEnv]?.trim() || 'custom', path: explicit, size: statSync(explicit).size, source: 'env' };
  }
  const version = wantedVersion(agent);
  const project = repoRoot();
  if (installedVersion(project, pin.pkg) === version) {
    const path = nativeBinary(agent, project);
    if (path) return { agent, version, path, size: statSync(path).size, source: 'project' };
  }
  const dir = join(project, '.saasbench', 'agents', `${agent}-${version}`);
  if (installedVersion(dir, pin.pkg) !== version || !nativeBinary(agent, dir)) await npmInstall(dir, `${pin.pkg}@${version}`);
  const path = nativeBinary(agent, dir);
  if (!path) throw new AgentConfigError(`${pin.pkg}@${version} installed in ${dir} but no native binary was found for ${process.platform}-${process.arch}`);
  return { agent, version, path, size: statSync(path).size, source: 'agents-dir' };
}

function installedVersion(root: string, pkg: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

const TRIPLE: Record<string, string> = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' };

/** The native binary inside an npm install root, or null. */
export function nativeBinary(agent: CliAgent, root: string): string | null {
  const nm = join(root, 'node_modules');
  const isFile = (p: string, minBytes = 1) => {
    try {
      const st = statSync(p);
      return st.isFile() && st.size >= minBytes;
    } catch {
      return false;
    }
  };
  if (agent === 'claude-code') {
    const candidates = [
      join(nm, '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'),
      join(nm, '@anthropic-ai', `claude-code-linux-${process.arch}`, 'claude'),
      join(nm, '@anthropic-ai', 'claude-code', 'node_modules', '@anthropic-ai', `claude-code-linux-${process.arch}`, 'claude'),
    ];
    // bin/claude.exe is a shell stub when the postinstall did not run
    return candidates.find((p) => isFile(p, 4097)) ?? null;
  }
  const triple = TRIPLE[process.arch] ?? `${process.arch}-unknown-linux-musl`;
  const vendors = [
    join(nm, '@openai', `codex-linux-${process.arch}`, 'vendor', triple),
    join(nm, '@openai', 'codex', 'node_modules', '@openai', `codex-linux-${process.arch}`, 'vendor', triple),
    join(nm, '@openai', 'codex', 'vendor', triple),
  ];
  for (const v of vendors) {
    for (const p of [join(v, 'codex', 'codex'), join(v, 'bin', 'codex')]) if (isFile(p, 4097)) return p;
  }
  return null;
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
  const name = PINS[bin.agent].name;
  const dest = `${CONTAINER_BIN_DIR}/${name}`;
  const have = await sandbox.exec(container, ['sh', '-c', `stat -c %s ${dest} 2>/dev/null || echo 0`]);
  if (Number(have.stdout.trim()) === bin.size) return dest;
  // streamed from the host file (the binaries are ~100-200 MB); missing parents are created 0755
  await sandbox.writeFiles(container, CONTAINER_BIN_DIR, [{ path: name, hostFile: bin.path, mode: 0o555 }]);
  return dest;
}
