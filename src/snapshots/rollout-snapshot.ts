import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as tar from 'tar-stream';
import type { DatabaseTarget } from '../model/database';
import type { SnapshotMeta } from '../model/snapshot';
import type { SandboxBackend } from '../sandbox/backend';
import type { SupervisionState } from '../agents/supervisor';
import { writeAtomic } from '../runs/files';
import { dumpDatabase, dumpName, restoreDatabase } from './db-dump';
import type { SnapshotStore } from './store';

/**
 * A rollout snapshot in the store, under `<rolloutKey>/<seq>/`:
 *   workspace.tar.gz  the whole workspace (dependency folders too: the resumed agent and the app
 *                     find them as they left them); pure download caches excluded
 *   session.tar.gz    the agent's own session files (driver.sessionPaths: ~/.claude, ~/.codex/sessions)
 *                     and the supervisor's control folder (each attempt's output: the session id)
 *   db-<svc>-<name>.gz one logical dump per database of the task
 *   meta.json         written last: a snapshot without it is incomplete and ignored
 */
export const CACHE_EXCLUDES = ['.npm', '.pnpm-store', '.yarn/cache', '.cache', '__pycache__'];
export const CONTROL_ROOT = '/tmp/.saasbench/agent';

export interface SnapshotFile extends SnapshotMeta {
  agent: string;
  model: string;
  /** the supervision state at the snapshot: a resume continues from it */
  supervision: SupervisionState;
  sessionPaths: string[];
  databases: string[];
}

export interface TakeOptions {
  store: SnapshotStore;
  sandbox: SandboxBackend;
  rolloutKey: string;
  host: string;
  agent: string;
  model: string;
  /** the app container and its workspace */
  container: string;
  workspace: string;
  /** where the agent process (and its session files) live: the app container unless a sidecar */
  processContainer: string;
  sessionPaths: string[];
  databases: { container: string; target: DatabaseTarget }[];
  supervision: SupervisionState;
  final: boolean;
}

const pad = (n: number) => String(n).padStart(4, '0');
export const snapshotId = (rolloutKey: string, seq: number) => `${rolloutKey}/${pad(seq)}`;

/** Every complete snapshot of a rollout, oldest first. */
export async function listSnapshots(store: SnapshotStore, rolloutKey: string): Promise<SnapshotFile[]> {
  const keys = (await store.list(`${rolloutKey}/`)).filter((k) => k.endsWith('/meta.json'));
  const metas: SnapshotFile[] = [];
  for (const k of keys) {
    const b = await store.get(k);
    if (b) metas.push(JSON.parse(b.toString('utf8')) as SnapshotFile);
  }
  return metas.sort((a, b) => a.seq - b.seq);
}

export async function readSnapshot(store: SnapshotStore, rolloutKey: string, seq: number | 'latest'): Promise<SnapshotFile | null> {
  if (seq === 'latest') return (await listSnapshots(store, rolloutKey)).pop() ?? null;
  const b = await store.get(`${snapshotId(rolloutKey, seq)}/meta.json`);
  return b ? (JSON.parse(b.toString('utf8')) as SnapshotFile) : null;
}

/**
 * Keep the newest `keep` complete snapshots of a rollout and delete the older ones (meta.json
 * first: a half-deleted snapshot is never taken for a complete one). Returns the seqs deleted.
 */
export async function pruneSnapshots(store: SnapshotStore, rolloutKey: string, keep: number): Promise<number[]> {
  const all = await listSnapshots(store, rolloutKey);
  const gone = all.slice(0, Math.max(0, all.length - keep));
  for (const s of gone) {
    const parts = (await store.list(`${s.id}/`)).filter((k) => !k.endsWith('/meta.json'));
    await store.remove([`${s.id}/meta.json`]);
    await store.remove(parts);
  }
  return gone.map((s) => s.seq);
}

export async function nextSeq(store: SnapshotStore, rolloutKey: string): Promise<number> {
  const all = await listSnapshots(store, rolloutKey);
  return (all.at(-1)?.seq ?? 0) + 1;
}

/**
 * Archives made in one container by ONE exec: each script writes its archive to `$OUT`, and all of
 * them come back on the exec's stdout as one plain tar (with each script's exit code), so nothing
 * is read back or removed afterwards. Each Docker round trip is ~0.07–0.25 s: a noop rollout's
 * final snapshot was once 6 of them in a row (bench/sweep-overhead.ts).
 */
export async function archiveIn(sandbox: SandboxBackend, container: string, scripts: Record<string, string>): Promise<Record<string, Buffer>> {
  const names = Object.keys(scripts);
  const dir = `/tmp/.saasbench-snapshot-${Date.now()}-${randomBytes(4).toString('hex')}`;
  const body = names.map((n, k) => `{ ${scripts[n].replaceAll('$OUT', `${dir}/${k}`)}; }; echo $? >> ${dir}/codes`).join('; ');
  const entries = ['codes', ...names.map((_, k) => String(k))].join(' ');
  // each archive keeps its own 600 s bound
  const r = await sandbox.execBytes(container, ['bash', '-c', `mkdir -p '${dir}' && : > ${dir}/codes || exit 1; ${body}; tar -C '${dir}' -cf - ${entries}; rc=$?; rm -rf '${dir}'; exit $rc`], { timeoutMs: 600_000 * Math.max(1, names.length) });
  const files = r.exitCode === 0 ? await untar(r.stdout) : new Map<string, Buffer>();
  // tar exits 1 when a file changed while it was read: the agent is live, the archive is still good
  const codes = (files.get('codes')?.toString('utf8') ?? '').trim().split('\n').filter(Boolean).map(Number);
  const bad = codes.find((c) => !(c <= 1));
  if (r.exitCode !== 0 || codes.length < names.length || bad !== undefined) throw new Error(`snapshot archive failed (exit ${r.exitCode}, tar ${bad ?? '?'}): ${r.stderr.slice(0, 400)}`);
  return Object.fromEntries(
    names.map((n, k) => {
      const b = files.get(String(k));
      if (!b) throw new Error(`snapshot archive ${n} missing after tar`);
      return [n, b];
    }),
  );
}

/** The regular files of a plain tar, by name. */
async function untar(buf: Buffer): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const x = tar.extract();
  x.on('entry', (h, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      if (h.type === 'file') out.set(h.name.replace(/^\.\//, ''), Buffer.concat(chunks));
      next();
    });
  });
  await new Promise<void>((resolve, reject) => {
    x.on('finish', resolve);
    x.on('error', reject);
    x.end(buf);
  });
  return out;
}

/** What a snapshot took: its metadata, the dumps, and the extra archives asked for alongside. */
export interface Taken {
  file: SnapshotFile;
  /** dump name (dumpName) → the gzipped dump */
  dumps: Record<string, Buffer>;
  alongside: Record<string, Buffer>;
}

/**
 * Take one snapshot (the agent keeps running: files are read live) and write it to the store.
 * `alongside`: more archive scripts for the app container, made in the same exec (the final
 * snapshot also takes the run folder's re-scoring archive: agents/snapshot.ts).
 */
export async function takeSnapshot(o: TakeOptions, seq: number, alongside: Record<string, string> = {}): Promise<Taken> {
  const id = snapshotId(o.rolloutKey, seq);
  const excludes = CACHE_EXCLUDES.map((e) => `--exclude=./${e}`).join(' ');
  const ws = `tar -C '${o.workspace}' ${excludes} -czf $OUT . 2>/dev/null`;
  const paths = [...o.sessionPaths, CONTROL_ROOT].map((p) => `'${p.replace(/^\/+/, '')}'`).join(' ');
  const sess = `set --; for p in ${paths}; do [ -e "/$p" ] && set -- "$@" "$p"; done; tar -C / -czf $OUT "$@" 2>/dev/null`;
  // reserved names in the one exec's archive set (callers' `alongside` names are file names)
  const K = { ws: 'snapshot:workspace', sess: 'snapshot:session' };
  // the agent in the app container (the usual case): everything in one exec; a sidecar's side by side;
  // the database dumps (one exec each, in their own containers) at the same time
  const sameContainer = o.processContainer === o.container;
  const [app, side, dumpList] = await Promise.all([
    archiveIn(o.sandbox, o.container, { ...alongside, [K.ws]: ws, ...(sameContainer ? { [K.sess]: sess } : {}) }),
    sameContainer ? null : archiveIn(o.sandbox, o.processContainer, { [K.sess]: sess }),
    Promise.all(o.databases.map(async (d) => [dumpName(d.target), await dumpDatabase(o.sandbox, d.container, d.target)] as const)),
  ]);
  const workspace = app[K.ws];
  const session = (side ?? app)[K.sess];
  const bytes: Record<string, number> = { workspace: workspace.length, session: session.length };
  await o.store.put(`${id}/workspace.tar.gz`, workspace);
  await o.store.put(`${id}/session.tar.gz`, session);
  const dumps: Record<string, Buffer> = {};
  for (const [name, dump] of dumpList) {
    if (!dump) continue;
    await o.store.put(`${id}/${name}`, dump);
    bytes[name] = dump.length;
    dumps[name] = dump;
  }
  const s = o.supervision;
  const agentMs = s.priorAgentMs + (s.attemptStartedAt ? Math.max(0, s.lastBeatAt - s.attemptStartedAt) : 0);
  const meta: SnapshotFile = {
    id, rolloutKey: o.rolloutKey, seq, takenAt: Date.now(), host: o.host, agentSeconds: Math.round(agentMs / 100) / 10, final: o.final, bytes,
    agent: o.agent, model: o.model, supervision: o.supervision, sessionPaths: o.sessionPaths, databases: Object.keys(dumps),
  };
  await o.store.put(`${id}/meta.json`, Buffer.from(JSON.stringify(meta, null, 2)));
  const extra = Object.fromEntries(Object.keys(alongside).map((k) => [k, app[k]]));
  return { file: meta, dumps, alongside: extra };
}

export interface RestoreOptions {
  store: SnapshotStore;
  sandbox: SandboxBackend;
  snapshot: SnapshotFile;
  container: string;
  workspace: string;
  processContainer: string;
  databases: { container: string; target: DatabaseTarget }[];
  /** restore the agent's session too (a resume); a fork with another agent starts fresh */
  session: boolean;
  /** the run folder: earlier attempts' output is copied back into agent/attempt-N */
  runDir: string;
}

/** Put a snapshot back into a freshly provisioned stack. */
export async function restoreSnapshot(o: RestoreOptions): Promise<void> {
  const id = o.snapshot.id;
  const need = async (part: string) => {
    const b = await o.store.get(`${id}/${part}`);
    if (!b) throw new Error(`snapshot ${id}: ${part} is missing from the store`);
    return b;
  };
  const ws = await need('workspace.tar.gz');
  // the snapshot is the whole workspace: what the agent deleted stays deleted
  await o.sandbox.exec(o.container, ['bash', '-c', `mkdir -p '${o.workspace}' && find '${o.workspace}' -mindepth 1 -maxdepth 1 -exec rm -rf {} +`]);
  await o.sandbox.extractArchive(o.container, o.workspace, ws);
  for (const d of o.databases) {
    const name = dumpName(d.target);
    if (o.snapshot.databases.includes(name)) await restoreDatabase(o.sandbox, d.container, d.target, await need(name));
  }
  if (!o.session) return;
  await o.sandbox.extractArchive(o.processContainer, '/', await need('session.tar.gz'));
  for (const h of o.snapshot.supervision.history) {
    for (const f of ['stdout.log', 'stderr.log']) {
      const b = await o.sandbox.readFile(o.processContainer, `${CONTROL_ROOT}/attempt-${h.attempt}/${f}`);
      if (b) writeAtomic(join(o.runDir, 'agent', `attempt-${h.attempt}`, f), b);
    }
  }
}
