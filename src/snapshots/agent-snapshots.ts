import type { Logger } from 'pino';
import { config } from '../config';
import type { SupervisionState } from '../agents/supervisor';
import type { AgentContext, AgentDriver } from '../agents/types';
import type { SnapshotMeta } from '../model/snapshot';
import { databasesOf } from './db-dump';
import { snapshotKeep, snapshotStore } from './factory';
import { nextSeq, pruneSnapshots, restoreSnapshot, takeSnapshot, type SnapshotFile, type TakeOptions, type Taken } from './rollout-snapshot';
import type { SnapshotStore } from './store';

/** What the history keeps of a snapshot: the metadata, never the contents. */
export const metaOf = (f: SnapshotFile): SnapshotMeta => ({ id: f.id, rolloutKey: f.rolloutKey, seq: f.seq, takenAt: f.takenAt, host: f.host, agentSeconds: f.agentSeconds, final: f.final, bytes: f.bytes });

function takeOptions(store: SnapshotStore, ctx: AgentContext, driver: AgentDriver, processContainer: string): Omit<TakeOptions, 'supervision' | 'final'> {
  return {
    store, sandbox: ctx.sandbox, rolloutKey: ctx.rolloutKey, host: config.hostId(), agent: driver.name, model: ctx.model,
    container: ctx.container, workspace: ctx.workspace, processContainer, sessionPaths: driver.sessionPaths ?? [],
    databases: databasesOf(ctx.task.environment).map((target) => ({ target, container: ctx.stack.services[target.service]?.container })).filter((d) => d.container),
  };
}

/**
 * Snapshots during the agent phase: every `everySeconds` of supervision (0: none) and once at the
 * end. A failed snapshot is logged and skipped: the agent's run matters more than its insurance.
 * `beat` keeps the activity's heartbeat going while a large workspace is archived.
 */
export function agentSnapshots(ctx: AgentContext, driver: AgentDriver, processContainer: string, o: { everySeconds: number; beat(): void; log: Logger }) {
  const store = snapshotStore();
  const keep = snapshotKeep();
  const base = takeOptions(store, ctx, driver, processContainer);
  const taken: SnapshotMeta[] = [];
  let last = Date.now();
  let seq: number | null = null;
  const take = async (state: SupervisionState, final: boolean, alongside?: Record<string, string>): Promise<Taken | null> => {
    const t = setInterval(o.beat, 5000);
    try {
      seq ??= await nextSeq(store, ctx.rolloutKey);
      const r = await takeSnapshot({ ...base, supervision: state, final }, seq, alongside);
      seq += 1;
      taken.push(metaOf(r.file));
      o.log.info({ snapshot: r.file.id, bytes: r.file.bytes, agentSeconds: r.file.agentSeconds, store: store.location }, 'rollout snapshot taken');
      if (keep) {
        const pruned: number[] = await pruneSnapshots(store, ctx.rolloutKey, keep).catch((err: Error) => (o.log.warn({ err: err.message }, 'pruning old snapshots failed'), []));
        if (pruned.length) o.log.info({ pruned, keep }, 'older snapshots deleted (SAASBENCH_SNAPSHOT_KEEP)');
        // the run's list keeps them (what was taken, and when) but says they are gone
        for (const m of taken) if (pruned.includes(m.seq)) m.deleted = true;
      }
      return r;
    } catch (err) {
      o.log.warn({ err: (err as Error).message }, 'rollout snapshot failed');
      return null;
    } finally {
      clearInterval(t);
    }
  };
  return {
    taken,
    async onPoll(state: SupervisionState): Promise<void> {
      if (o.everySeconds <= 0 || Date.now() - last < o.everySeconds * 1000) return;
      await take(state, false);
      last = Date.now();
    },
    /** the last snapshot; `alongside`: more archives of the app container taken in the same exec (null: it failed) */
    final: (state: SupervisionState, alongside?: Record<string, string>) => take(state, true, alongside),
  };
}

/** Restore a snapshot into this rollout's (new) stack: workspace and databases; the session when resuming. */
export async function restoreInto(ctx: AgentContext, driver: AgentDriver | null, processContainer: string, snap: SnapshotFile): Promise<void> {
  const store = snapshotStore();
  const t = takeOptions(store, ctx, driver ?? { name: snap.agent, launch: () => ({ script: '' }) }, processContainer);
  await restoreSnapshot({ store, sandbox: ctx.sandbox, snapshot: snap, container: ctx.container, workspace: ctx.workspace, processContainer, databases: t.databases, session: driver !== null, runDir: ctx.runDir });
}
