import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PullError, redactUrl } from './pull-error';

/**
 * The published task folders, read with the git CLI from one pinned commit without cloning the
 * repository: a depth-1 fetch of that commit with `--filter=blob:none` brings its commit and trees
 * only; the blobs of the files the harness reads are then fetched in one batch by object id (what
 * a partial clone's lazy fetch does). GitHub serves both; a bare repository needs
 * uploadpack.allowFilter and uploadpack.allowAnySHA1InWant (or allowReachableSHA1InWant).
 * Everything is content-addressed, so the bytes written are exactly those of the pinned commit.
 */

export interface GitFile {
  /** path in the repository, e.g. eval/task_x/tasks/task_x/docker/Dockerfile */
  path: string;
  oid: string;
  mode: string;
}

export interface TaskFiles {
  files: GitFile[];
  /** symlinks and submodules: never written (a link could point outside the task folder) */
  skipped: string[];
}

interface GitRun {
  cwd?: string;
  input?: string;
  /** what the failure line names, e.g. "git fetch <url>" */
  what: string;
}

const GIT_ENV = { GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never', LC_ALL: 'C' };

/** The line of git's stderr that says what went wrong (its last fatal:/error: line), credentials redacted. */
function gitCause(stderr: string, code: number | null): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const line = [...lines].reverse().find((l) => /^(fatal|error):/.test(l)) ?? lines[lines.length - 1] ?? `exit code ${code}`;
  return line.replace(/^(fatal|error):\s*/, '').replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}

function git(args: string[], run: GitRun): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', args, { cwd: run.cwd, env: { ...process.env, ...GIT_ENV }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'ENOENT' ? new PullError('git', 'not found on PATH (install git, e.g. apt-get install git)') : new PullError(run.what, e.message)),
    );
    child.on('close', (code) => (code === 0 ? resolvePromise(Buffer.concat(out)) : reject(new PullError(run.what, gitCause(err, code)))));
    child.stdin.on('error', () => undefined); // git may exit before reading all input; its exit code tells
    child.stdin.end(run.input ?? '');
  });
}

/** `git ls-tree -z` records: mode, type, oid, path. */
function parseLsTree(out: Buffer): { mode: string; type: string; oid: string; path: string }[] {
  return out
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((rec) => {
      const tab = rec.indexOf('\t');
      const [mode, type, oid] = rec.slice(0, tab).split(' ');
      return { mode, type, oid, path: rec.slice(tab + 1) };
    });
}

/** Does the file belong to what the harness reads of task `name`? (docker/** minus workspace/, the prompt, evaluate/*.json and config.py) */
export function harnessReads(name: string, path: string): boolean {
  const root = `eval/${name}/`;
  if (!path.startsWith(root)) return false;
  const rel = path.slice(root.length);
  const docker = `tasks/${name}/docker/`;
  if (rel.startsWith(docker)) return !rel.slice(docker.length).startsWith('workspace/');
  if (rel === `check/${name}/prompt_for_model.md`) return true;
  const evaluate = `check/${name}_e/evaluate/`;
  if (!rel.startsWith(evaluate)) return false;
  const leaf = rel.slice(evaluate.length);
  return !leaf.includes('/') && (leaf.endsWith('.json') || leaf === 'config.py');
}

export async function gitVersion(): Promise<string> {
  return (await git(['--version'], { what: 'git' })).toString('utf8').trim();
}

export class GitSource {
  private constructor(
    private readonly dir: string,
    readonly url: string,
    readonly commit: string,
  ) {}

  /** Fetch `commit` (commit and trees, no file contents) from `url` into a scratch repository at `dir`. */
  static async fetch(url: string, commit: string, dir: string): Promise<GitSource> {
    const where = `git fetch ${redactUrl(url)} ${commit.slice(0, 12)}`;
    mkdirSync(dir, { recursive: true });
    await git(['-c', 'init.defaultBranch=main', 'init', '-q', dir], { what: 'git init' });
    await git(['remote', 'add', 'origin', url], { cwd: dir, what: 'git remote add' });
    await git(['fetch', '-q', '--depth=1', '--filter=blob:none', '--no-tags', 'origin', commit], { cwd: dir, what: where });
    const got = (await git(['rev-parse', '--verify', '-q', `${commit}^{commit}`], { cwd: dir, what: where })).toString('utf8').trim();
    if (got !== commit) throw new PullError(where, `fetched ${got}, not the pinned commit`);
    return new GitSource(dir, url, commit);
  }

  /** The task folders (task_*) under eval/ at the commit. */
  async listTasks(): Promise<string[]> {
    const entries = parseLsTree(await git(['ls-tree', '-z', this.commit, '--', 'eval/'], { cwd: this.dir, what: 'git ls-tree' }));
    const names = entries.filter((e) => e.type === 'tree' && /^eval\/task_[^/]+$/.test(e.path)).map((e) => e.path.slice('eval/'.length));
    if (!names.length) throw new PullError(`${redactUrl(this.url)} @ ${this.commit.slice(0, 12)}`, 'no eval/task_* folders at this commit');
    return names.sort();
  }

  /** The files of task `name` that the harness reads (listed from the trees: no file is downloaded yet). */
  async taskFiles(name: string): Promise<TaskFiles> {
    const entries = parseLsTree(await git(['ls-tree', '-r', '-z', this.commit, '--', `eval/${name}/`], { cwd: this.dir, what: 'git ls-tree' }));
    const files: GitFile[] = [];
    const skipped: string[] = [];
    for (const e of entries) {
      if (!harnessReads(name, e.path)) continue;
      if (e.type === 'blob' && (e.mode === '100644' || e.mode === '100755')) files.push({ path: e.path, oid: e.oid, mode: e.mode });
      else skipped.push(e.path);
    }
    return { files, skipped };
  }

  /** Download the contents of these blobs in one request. */
  async fetchBlobs(oids: string[]): Promise<void> {
    if (!oids.length) return;
    await git(['-c', 'fetch.negotiationAlgorithm=noop', 'fetch', '-q', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', '--filter=blob:none', '--stdin', 'origin'], {
      cwd: this.dir,
      input: `${[...new Set(oids)].join('\n')}\n`,
      what: `git fetch ${redactUrl(this.url)} (${oids.length} files of ${this.commit.slice(0, 12)})`,
    });
  }

  /**
   * Write `files` below `outDir`, each at `target(file.path)`, keeping the executable bit. Returns
   * the sha256 and size of each written file, keyed by its target path.
   */
  async writeFiles(files: GitFile[], outDir: string, target: (repoPath: string) => string): Promise<Map<string, { sha256: string; size: number }>> {
    const written = new Map<string, { sha256: string; size: number }>();
    if (!files.length) return written;
    const out = await git(['cat-file', '--batch'], { cwd: this.dir, input: `${files.map((f) => f.oid).join('\n')}\n`, what: 'git cat-file' });
    let pos = 0;
    for (const f of files) {
      const nl = out.indexOf(0x0a, pos);
      const [oid, type, sizeText] = out.subarray(pos, nl).toString('utf8').split(' ');
      if (oid !== f.oid || type !== 'blob') throw new PullError(f.path, `git has no blob ${f.oid} (${type ?? 'missing'})`);
      const size = Number(sizeText);
      const data = out.subarray(nl + 1, nl + 1 + size);
      pos = nl + 1 + size + 1;
      const rel = target(f.path);
      // trees are not fsck'd on fetch: a crafted entry must not write outside the task folder
      if (rel.split('/').some((seg) => seg === '' || seg === '.' || seg === '..' || seg === '.git')) throw new PullError(f.path, 'refusing a path that leaves the task folder');
      const file = join(outDir, rel);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, data);
      if (f.mode === '100755') chmodSync(file, 0o755);
      written.set(rel, { sha256: createHash('sha256').update(data).digest('hex'), size });
    }
    return written;
  }
}
