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

export async function nextSeq(store: SnapshotStore, rolloutKey: string): Promise<number> {
  const all = await listSnapshots(store, rolloutKey);
  return (all.at(-1)?.seq ?? 0) + 1;
}

/**
 * Archive in one container: every script (its `$OUT` is its archive) runs in ONE exec, which also
 * bundles the archives into one plain tar, so ONE file is read (the engine serialises a container's
 * archive reads: two reads cost twice one) and one more exec removes them. Each exec or read is
 * ~0.07–0.25 s: a noop rollout's final snapshot was 6 of them in a row (bench/sweep-overhead.ts).
 */
async function tarOut(sandbox: SandboxBackend, container: string, scripts: string[]): Promise<Buffer[]> {
  const dir = `/tmp/.saasbench-snapshot-${Date.now()}-${randomBytes(4).toString('hex')}`;
  const names = scripts.map((_, k) => `${k}.tar.gz`);
  const body = scripts.map((s, k) => `${s.replaceAll('$OUT', `${dir}/${names[k]}`)}; echo $?`).join('; ');
  // each archive keeps its own 600 s bound
  const r = await sandbox.exec(container, ['bash', '-c', `mkdir -p /tmp/.saasbench '${dir}'; ${body}; tar -C '${dir}' -cf '${dir}/bundle.tar' ${names.join(' ')}`], { timeoutMs: 600_000 * scripts.length });
  // tar exits 1 when a file changed while it was read: the agent is live, the archive is still good
  const codes = r.stdout.trim().split('\n').slice(-scripts.length).map(Number);
  const bad = codes.find((c) => !(c <= 1));
  if (codes.length < scripts.length || bad !== undefined) throw new Error(`snapshot archive failed (tar ${bad ?? '?'}): ${r.stderr.slice(0, 400)}`);
  const bundle = await sandbox.readFile(container, `${dir}/bundle.tar`);
  await sandbox.exec(container, ['rm', '-rf', dir]);
  const files = bundle ? await untar(bundle) : new Map<string, Buffer>();
  return names.map((n) => {
    const b = files.get(n);
    if (!b) throw new Error('snapshot archive missing after tar');
    return b;
  });
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

/** Take one snapshot (the agent keeps running: files are read live) and write it to the store. */
export async function takeSnapshot(o: TakeOptions, seq: number): Promise<SnapshotFile> {
  const id = snapshotId(o.rolloutKey, seq);
  const excludes = CACHE_EXCLUDES.map((e) => `--exclude=./${e}`).join(' ');
  const ws = `tar -C '${o.workspace}' ${excludes} -czf $OUT . 2>/dev/null`;
  const paths = [...o.sessionPaths, CONTROL_ROOT].map((p) => `'${p.replace(/^\/+/, '')}'`).join(' ');
  const sess = `set --; for p in ${paths}; do [ -e "/$p" ] && set -- "$@" "$p"; done; tar -C / -czf $OUT "$@" 2>/dev/null`;
  // the agent in the app container (the usual case): both archives in one exec; a sidecar's side by side
  const [workspace, session] =
    o.processContainer === o.container
      ? await tarOut(o.sandbox, o.container, [ws, sess])
      : (await Promise.all([tarOut(o.sandbox, o.container, [ws]), tarOut(o.sandbox, o.processContainer, [sess])])).flat();
  const bytes: Record<string, number> = { workspace: workspace.length, session: session.length };
  await o.store.put(`${id}/workspace.tar.gz`, workspace);
  await o.store.put(`${id}/session.tar.gz`, session);
  const databases: string[] = [];
  for (const d of o.databases) {
    const dump = await dumpDatabase(o.sandbox, d.container, d.target);
    if (!dump) continue;
    const name = dumpName(d.target);
    await o.store.put(`${id}/${name}`, dump);
    bytes[name] = dump.length;
    databases.push(name);
  }
  const s = o.supervision;
  const agentMs = s.priorAgentMs + (s.attemptStartedAt ? Math.max(0, s.lastBeatAt - s.attemptStartedAt) : 0);
  const meta: SnapshotFile = {
    id, rolloutKey: o.rolloutKey, seq, takenAt: Date.now(), host: o.host, agentSeconds: Math.round(agentMs / 100) / 10, final: o.final, bytes,
    agent: o.agent, model: o.model, supervision: o.supervision, sessionPaths: o.sessionPaths, databases,
  };
  await o.store.put(`${id}/meta.json`, Buffer.from(JSON.stringify(meta, null, 2)));
  return meta;
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
