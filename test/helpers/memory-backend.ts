// An in-memory sandbox backend (src/sandbox/backend.ts): files live in a Map per container and
// every exec goes to a scripted handler the test supplies. It proves the seam: code that runs
// against it reaches containers only through the backend. Endpoints are on a non-loopback host on
// purpose, so a caller that assumes 127.0.0.1 shows up.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { gunzipSync } from 'node:zlib';
import * as tar from 'tar-stream';
import type { SandboxBackend, SidecarSpec } from '../../src/sandbox/backend';
import { SandboxInfraError, SandboxInputError } from '../../src/sandbox';
import type { ExecResult, StackHandle } from '../../src/model/sandbox';
import type { ExecOptions } from '../../src/sandbox/exec';

export interface MemFile {
  data: Buffer;
  mode: number;
}

export interface ExecCall {
  container: string;
  cmd: string[];
  opts: ExecOptions;
  /** the container's files (the handler may read and change them) */
  files: Map<string, MemFile>;
}

/** Answers one exec; undefined = "no script for this command" (exit 127, named in stderr). */
export type ExecHandler = (call: ExecCall) => ExecResult | undefined | Promise<ExecResult | undefined>;

export const ok = (stdout = '', exitCode = 0): ExecResult => ({ exitCode, stdout, stderr: '', timedOut: false });

export class MemoryBackend implements SandboxBackend {
  readonly kind = 'memory';
  /** container -> absolute path -> file */
  readonly containers = new Map<string, Map<string, MemFile>>();
  readonly logsOf = new Map<string, string>();
  /** every operation, in order: what the code under test asked of the sandbox */
  readonly calls: { op: string; container: string; detail: string }[] = [];
  private nextPort = 40000;
  private nextPid = 100;

  constructor(
    private readonly handler: ExecHandler = () => undefined,
    readonly host = '10.77.0.5',
  ) {}

  /** The files of a container (created on first use). */
  fs(container: string): Map<string, MemFile> {
    let m = this.containers.get(container);
    if (!m) this.containers.set(container, (m = new Map()));
    return m;
  }

  text(container: string, path: string): string | undefined {
    return this.containers.get(container)?.get(path)?.data.toString('utf8');
  }

  async up(opts: Parameters<SandboxBackend['up']>[0]): Promise<StackHandle> {
    const project = `mem-${opts.rolloutKey}`;
    const handle: StackHandle = { rolloutKey: opts.rolloutKey, project, network: `${project}-net`, services: {} };
    for (const [name, s] of Object.entries(opts.project.services)) {
      const ports: Record<string, number> = {};
      for (const p of s.ports) ports[`${p.target}/${p.protocol}`] = this.nextPort++;
      handle.services[name] = { container: `${project}-${name}`, ports };
      this.fs(handle.services[name].container);
    }
    this.calls.push({ op: 'up', container: '', detail: opts.rolloutKey });
    return handle;
  }

  async down(rolloutKey: string) {
    let containers = 0;
    for (const c of [...this.containers.keys()]) if (c.startsWith(`mem-${rolloutKey}-`)) containers += this.containers.delete(c) ? 1 : 0;
    this.calls.push({ op: 'down', container: '', detail: rolloutKey });
    return { removed: { containers, networks: containers ? 1 : 0, volumes: 0 } };
  }

  async reap(): Promise<string[]> {
    return [];
  }

  async exec(container: string, cmd: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    if (cmd.length === 0) throw new SandboxInputError('exec: empty command');
    this.calls.push({ op: 'exec', container, detail: cmd.join(' ') });
    const r = await this.handler({ container, cmd, opts, files: this.fs(container) });
    return r ?? { exitCode: 127, stdout: '', stderr: `memory backend: no script for ${JSON.stringify(cmd)}`, timedOut: false };
  }

  async execBytes(container: string, cmd: string[], opts: ExecOptions = {}) {
    const r = await this.exec(container, cmd, opts);
    return { ...r, stdout: Buffer.from(r.stdout) };
  }

  async execDetached(container: string, script: string, opts: { controlDir: string; workdir?: string; files?: { dir: string; files: { path: string; content: Buffer }[] } }): Promise<{ pid: number }> {
    this.calls.push({ op: 'execDetached', container, detail: script });
    const files = this.fs(container);
    for (const f of opts.files?.files ?? []) files.set(posix.join(opts.files!.dir, f.path), { data: f.content, mode: 0o644 });
    files.set(`${opts.controlDir}/script.sh`, { data: Buffer.from(script), mode: 0o755 });
    const r = await this.handler({ container, cmd: ['bash', `${opts.controlDir}/script.sh`], opts: { workdir: opts.workdir }, files });
    const pid = this.nextPid++;
    // the process "ran to completion": its control files say so, as the Docker runner's would
    files.set(`${opts.controlDir}/pid`, { data: Buffer.from(`${pid}\n`), mode: 0o644 });
    files.set(`${opts.controlDir}/stdout.log`, { data: Buffer.from(r?.stdout ?? ''), mode: 0o644 });
    files.set(`${opts.controlDir}/stderr.log`, { data: Buffer.from(r?.stderr ?? ''), mode: 0o644 });
    files.set(`${opts.controlDir}/exit_code`, { data: Buffer.from(`${r?.exitCode ?? 0}\n`), mode: 0o644 });
    return { pid };
  }

  async readFile(container: string, path: string, opts: { maxBytes?: number } = {}): Promise<Buffer | null> {
    this.calls.push({ op: 'readFile', container, detail: path });
    const f = this.fs(container).get(posix.normalize(path));
    if (!f) return null;
    return opts.maxBytes === undefined ? f.data : f.data.subarray(0, opts.maxBytes);
  }

  async writeFiles(container: string, destDir: string, files: Parameters<SandboxBackend['writeFiles']>[2]): Promise<void> {
    if (!destDir.startsWith('/')) throw new SandboxInputError(`container path must be absolute: ${destDir}`);
    for (const f of files) {
      const p = posix.join(destDir, f.path);
      if (!p.startsWith(posix.normalize(destDir))) throw new SandboxInputError(`writeFiles: path ${JSON.stringify(f.path)} escapes ${destDir}`);
      const data = f.hostFile !== undefined ? readFileSync(f.hostFile) : Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content ?? '');
      this.fs(container).set(p, { data, mode: f.mode ?? 0o644 });
      this.calls.push({ op: 'writeFile', container, detail: p });
    }
  }

  async copyDir(container: string, hostDir: string, destDir: string, opts: { exclude?: string[] } = {}): Promise<void> {
    const skip = new Set(opts.exclude ?? []);
    const walk = (rel: string) => {
      for (const name of readdirSync(join(hostDir, rel)).sort()) {
        if (skip.has(name)) continue;
        const r = rel ? `${rel}/${name}` : name;
        const st = statSync(join(hostDir, r));
        if (st.isDirectory()) walk(r);
        else this.fs(container).set(posix.join(destDir, r), { data: readFileSync(join(hostDir, r)), mode: st.mode & 0o777 });
      }
    };
    walk('');
    this.calls.push({ op: 'copyDir', container, detail: `${hostDir} -> ${destDir}` });
  }

  async extractArchive(container: string, destDir: string, archive: Buffer): Promise<void> {
    const raw = archive[0] === 0x1f && archive[1] === 0x8b ? gunzipSync(archive) : archive;
    const extract = tar.extract();
    const done = new Promise<void>((resolve, reject) => {
      extract.on('entry', (h, stream, next) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: unknown) => chunks.push(c as Buffer));
        stream.on('end', () => {
          if (h.type === 'file') this.fs(container).set(posix.join(destDir, h.name), { data: Buffer.concat(chunks), mode: h.mode ?? 0o644 });
          next();
        });
      });
      extract.on('finish', resolve);
      extract.on('error', reject);
    });
    extract.end(raw);
    await done;
    this.calls.push({ op: 'extractArchive', container, detail: destDir });
  }

  async logs(container: string, tail: number): Promise<string> {
    return (this.logsOf.get(container) ?? '').split('\n').slice(-tail).join('\n');
  }

  endpoint(stack: StackHandle, service: string, port: number) {
    const p = stack.services[service]?.ports[`${port}/tcp`];
    if (!p) throw new SandboxInfraError(`service ${service} publishes no port ${port} in stack ${stack.project}`);
    return { host: this.host, port: p, url: `http://${this.host}:${p}` };
  }

  async gateway(): Promise<string> {
    return '10.77.0.1';
  }

  async addresses(): Promise<string[]> {
    return [];
  }

  async startSidecar(spec: SidecarSpec): Promise<string> {
    this.fs(spec.name);
    this.calls.push({ op: 'startSidecar', container: spec.name, detail: spec.image });
    return spec.name;
  }
}
