/**
 * OpenHands' runtime on the worker host. openhands-ai 1.6.0 (PyPI) requires Python >= 3.12, < 3.14;
 * Debian 12 hosts have 3.11 and nothing in reach (PyPI, npm, Debian) ships a 3.12 interpreter for
 * them. So the worker builds a small runtime image from Debian 13 (debootstrap, Python 3.13, the
 * docker CLI, tmux, git — the same debootstrap + `docker import` recipe as saasbench/base) and
 * installs openhands-ai from PyPI into a project-managed venv on the host,
 * `.saasbench/agents/openhands-<version>-venv`, created with that image's Python and bind-mounted
 * read-only into a per-rollout sidecar container (host network, Docker socket) in which OpenHands
 * runs with its local runtime. Its shell commands reach the task's container with `docker exec`,
 * as in the paper; the sidecar only adds a boundary around OpenHands itself (no access to the
 * worker's files or environment).
 *
 * Overrides: SAASBENCH_OPENHANDS_VERSION (default 1.6.0), SAASBENCH_OPENHANDS_IMAGE (a prepared
 * runtime image; default saasbench/openhands-runtime:trixie), SAASBENCH_DEBIAN_MIRROR.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentConfigError } from '../../errors';
import { repoRoot } from '../../paths';

const execFileP = promisify(execFile);

export const OPENHANDS_DEFAULT_VERSION = '1.6.0';
export const RUNTIME_PACKAGES = ['python3', 'python3-venv', 'python3-pip', 'ca-certificates', 'docker-cli', 'tmux', 'git', 'procps', 'curl'];

export function openhandsVersion(): string {
  return process.env.SAASBENCH_OPENHANDS_VERSION?.trim() || OPENHANDS_DEFAULT_VERSION;
}

export function runtimeImage(): string {
  return process.env.SAASBENCH_OPENHANDS_IMAGE?.trim() || 'saasbench/openhands-runtime:trixie';
}

export function venvDir(version = openhandsVersion()): string {
  return join(repoRoot(), '.saasbench', 'agents', `openhands-${version}-venv`);
}

async function imageExists(image: string): Promise<boolean> {
  try {
    await execFileP('docker', ['image', 'inspect', image], { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

function run(cmd: string, args: string[], log: (line: string) => void, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    let tail = '';
    const onData = (b: Buffer) => {
      const s = b.toString();
      tail = (tail + s).slice(-4000);
      for (const l of s.split('\n')) if (l.trim()) log(l);
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new AgentConfigError(`${cmd} ${args.slice(0, 3).join(' ')} … failed (exit ${code}):\n${tail}`));
    });
  });
}

/** A lock directory per host and purpose (mkdir is atomic); a stale lock (> 30 min) is broken. */
async function withLock<T>(dir: string, f: () => Promise<T>): Promise<T> {
  mkdirSync(join(dir, '..'), { recursive: true });
  for (let waited = 0; ; waited += 2000) {
    try {
      mkdirSync(dir);
      break;
    } catch {
      try {
        if (Date.now() - statSync(dir).mtimeMs > 1_800_000) rmSync(dir, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      if (waited > 1_800_000) throw new AgentConfigError(`timed out waiting for lock ${dir}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  try {
    return await f();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Build the runtime image when missing (debootstrap Debian 13 + docker import, ~2 min). */
export async function ensureRuntimeImage(log: (line: string) => void = () => undefined): Promise<string> {
  const image = runtimeImage();
  if (await imageExists(image)) return image;
  if (process.env.SAASBENCH_OPENHANDS_IMAGE) throw new AgentConfigError(`SAASBENCH_OPENHANDS_IMAGE=${image} does not exist`);
  return withLock(join(repoRoot(), '.saasbench', 'agents', '.openhands-image-lock'), async () => {
    if (await imageExists(image)) return image;
    const mirror = process.env.SAASBENCH_DEBIAN_MIRROR || 'http://deb.debian.org/debian';
    const root = mkdtempSync('/var/tmp/saasbench-openhands-rootfs.');
    try {
      await run('debootstrap', ['--variant=minbase', `--include=${RUNTIME_PACKAGES.join(',')}`, 'trixie', root, mirror], log, 1_200_000);
      await run('bash', ['-c', `tar -C '${root}' -c . | docker import -c 'CMD ["/bin/bash"]' - '${image}'`], log, 600_000);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    return image;
  });
}

const HOST_CA = '/etc/ssl/certs/ca-certificates.crt';

/**
 * The host's CA bundle (machines behind a TLS-inspecting proxy trust its CA there) and its pip/proxy
 * settings, for containers that talk to PyPI or the model relay.
 */
export function hostTrustArgs(): string[] {
  const args: string[] = [];
  if (existsSync(HOST_CA)) args.push('-v', `${HOST_CA}:${HOST_CA}:ro`, '-e', `PIP_CERT=${HOST_CA}`, '-e', `SSL_CERT_FILE=${HOST_CA}`, '-e', `REQUESTS_CA_BUNDLE=${HOST_CA}`);
  for (const k of ['PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']) {
    if (process.env[k]) args.push('-e', `${k}=${process.env[k]}`);
  }
  return args;
}

/** pip-install openhands-ai==<version> into the host venv (with the runtime image's Python) when missing. */
export async function ensureVenv(log: (line: string) => void = () => undefined): Promise<{ venv: string; version: string; image: string }> {
  const image = await ensureRuntimeImage(log);
  const version = openhandsVersion();
  const venv = venvDir(version);
  const marker = join(venv, '.saasbench-installed');
  if (existsSync(marker)) return { venv, version, image };
  await withLock(`${venv}.lock`, async () => {
    if (existsSync(marker)) return;
    rmSync(venv, { recursive: true, force: true });
    mkdirSync(venv, { recursive: true });
    // The wheel ships OpenHands' own poetry.lock: pinning every dependency to it makes pip's resolution
    // immediate and reproducible (unconstrained, pip backtracks through hundreds of boto3/otel versions).
    const script = [
      'set -e',
      `python3 -m venv '${venv}'`,
      'rm -rf /tmp/oh-wheel && mkdir -p /tmp/oh-wheel',
      `'${venv}/bin/pip' download --disable-pip-version-check --no-input --no-deps -d /tmp/oh-wheel 'openhands-ai==${version}'`,
      `'${venv}/bin/python' - <<'PY'`,
      'import glob, io, tomllib, zipfile',
      "whl = glob.glob('/tmp/oh-wheel/openhands_ai-*.whl')[0]",
      "lock = tomllib.load(io.BytesIO(zipfile.ZipFile(whl).read('openhands/poetry.lock')))",
      "open('/tmp/oh-wheel/constraints.txt', 'w').write(''.join(f\"{p['name']}=={p['version']}\\n\" for p in lock['package'] if p.get('source', {}).get('type') in (None, 'legacy')))",
      'PY',
      `'${venv}/bin/pip' install --disable-pip-version-check --no-input -c /tmp/oh-wheel/constraints.txt /tmp/oh-wheel/openhands_ai-*.whl`,
      `'${venv}/bin/python' -c 'import openhands.core.main, sys; print("openhands ok", sys.version)'`,
      `cp /tmp/oh-wheel/constraints.txt '${venv}/saasbench-constraints.txt'`,
      `touch '${marker}'`,
    ].join('\n');
    const cache = join(repoRoot(), '.saasbench', 'agents', 'pip-cache');
    mkdirSync(cache, { recursive: true });
    await run('docker', ['run', '--rm', '--network', 'host', ...hostTrustArgs(), '-v', `${venv}:${venv}`, '-v', `${cache}:/root/.cache/pip`, image, 'bash', '-c', script], log, 3_600_000);
  });
  return { venv, version, image };
}

if (require.main === module) {
  // `node dist/src/agents/openhands/runtime.js`: prepare a worker host ahead of the first rollout
  ensureVenv((l) => process.stderr.write(`${l}\n`)).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}
