import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { imageId } from '../sandbox';
import type { Task } from '../model/task';
import { repoRoot } from '../paths';
import { publishedProvenance, type PublishedProvenance } from '../benchmark/lock-file';

/**
 * Everything that decides a score, pinned by content (as Harbor's lock.json does): if any of it
 * differs, two scores are not comparable.
 */
export interface RolloutLock {
  /** `primitives`: content hash of the primitive library as loaded (primitivesVersion); absent in older locks */
  harness: { version: string; commit: string | null; dirty: boolean; node: string; temporalSdk: string; primitives?: string };
  /** `published`: where a task folder written by `saasbench benchmark pull` came from (its saasbench-pull.json) */
  /** `nodes`: per-node definition hash (nodeHashes), what incremental re-scoring compares; absent in older locks */
  task: { id: string; layout: string; hash: string; dagFile: string; dagSha256: string; nodes?: Record<string, string>; published?: PublishedProvenance };
  images: Record<string, { ref: string; id: string | null }>;
  /** the image map applied (flags, sweep file, SAASBENCH_IMAGE_MAP): from → to; absent when none */
  imageMap?: Record<string, string>;
  agent?: { name: string; cliVersion: string | null; model: string };
  judge?: { enabled: boolean; model: string };
  /** the agent's sandbox as applied (docs/security.md); informational, not part of diffLock */
  isolation?: {
    agentService: string;
    agentLimits: { cpus: number; memoryBytes: number; pids: number };
    serviceLimits: { cpus: number; memoryBytes: number; pids: number };
    firewall: string;
    egressAllow: string[];
  };
}

const sha256 = (buf: Buffer | string) => createHash('sha256').update(buf).digest('hex');

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: repoRoot(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

let harnessCache: RolloutLock['harness'] | null = null;

/**
 * The harness as this process loaded it, computed once: the code a worker runs does not change when
 * files change under it, and the two git calls cost ~0.1 s on every provision (bench/sweep-overhead.ts).
 */
export function harnessLock(): RolloutLock['harness'] {
  harnessCache ??= computeHarnessLock();
  return { ...harnessCache };
}

function computeHarnessLock(): RolloutLock['harness'] {
  const pkg = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string };
  const sdk = JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string };
  const status = git(['status', '--porcelain', '--untracked-files=no']);
  return { version: pkg.version, commit: git(['rev-parse', 'HEAD']), dirty: !!status, node: process.version, temporalSdk: sdk.version, primitives: primitivesVersion() };
}

let primitivesCache: string | null = null;

/**
 * The primitive library's version: a hash of the code of src/primitives as this process loaded it
 * (the .js of a build, the .ts under a TypeScript runner). Any change there may change any node's
 * result, so incremental re-scoring re-runs every node when it differs. Computed once per process.
 */
export function primitivesVersion(): string {
  if (primitivesCache) return primitivesCache;
  const root = join(__dirname, '..', 'primitives');
  const h = createHash('sha256');
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else if (/\.(js|ts|json|py)$/.test(e.name) && !/\.d\.ts$/.test(e.name)) h.update(`${rel}${e.name}\0`).update(readFileSync(join(dir, e.name))).update('\0');
    }
  };
  walk(root, '');
  primitivesCache = h.digest('hex');
  return primitivesCache;
}

/** JSON with sorted object keys: the hash of a node must not depend on key order in dag.json. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * Per-node definition hash: the node as loaded (chain, scoring, prereqs, description) plus the
 * task variables its templates may read — a changed variable re-runs every node, conservatively.
 */
export function nodeHashes(task: Task): Record<string, string> {
  const vars = canonical(task.variables ?? {});
  return Object.fromEntries(task.dag.nodes.map((n) => [n.id, sha256(`${canonical(n)}\n${vars}`)]));
}

export function taskLock(task: Task): RolloutLock['task'] {
  const published = task.layout === 'published' ? publishedProvenance(task.dir) : null;
  return { id: task.id, layout: task.layout, hash: task.hash, dagFile: task.dagFile, dagSha256: sha256(readFileSync(task.dagFile)), nodes: nodeHashes(task), ...(published ? { published } : {}) };
}

export async function imagesLock(images: Record<string, string>): Promise<RolloutLock['images']> {
  const out: RolloutLock['images'] = {};
  for (const [svc, ref] of Object.entries(images)) {
    const id = await imageId(ref);
    out[svc] = { ref, id };
  }
  return out;
}

export interface LockChange {
  path: string;
  before: unknown;
  after: unknown;
}

/** Differences that change what a score means (the harness's own node version is informational). */
export function diffLock(before: RolloutLock, after: RolloutLock): LockChange[] {
  const changes: LockChange[] = [];
  const cmp = (path: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) changes.push({ path, before: a, after: b });
  };
  cmp('task.hash', before.task.hash, after.task.hash);
  cmp('task.dagSha256', before.task.dagSha256, after.task.dagSha256);
  cmp('harness.commit', before.harness.commit, after.harness.commit);
  if (before.harness.primitives && after.harness.primitives) cmp('harness.primitives', before.harness.primitives, after.harness.primitives);
  if (before.task.nodes && after.task.nodes) for (const id of new Set([...Object.keys(before.task.nodes), ...Object.keys(after.task.nodes)])) cmp(`task.nodes.${id}`, before.task.nodes[id] ?? null, after.task.nodes[id] ?? null);
  for (const svc of new Set([...Object.keys(before.images), ...Object.keys(after.images)])) cmp(`images.${svc}.id`, before.images[svc]?.id, after.images[svc]?.id);
  if (after.judge) cmp('judge.model', before.judge?.model, after.judge.model);
  return changes;
}
