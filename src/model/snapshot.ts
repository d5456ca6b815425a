/**
 * Rollout snapshots (src/snapshots): what travels through Temporal about them. Metadata only —
 * the contents (workspace, database dump, agent session) stay in the snapshot store.
 */

/** One snapshot as the rollout's history and report list it. */
export interface SnapshotMeta {
  /** `<rolloutKey>/<seq>`: the store folder */
  id: string;
  rolloutKey: string;
  /** 1, 2, … per rollout, continued across host moves */
  seq: number;
  /** wall-clock ms when it was taken */
  takenAt: number;
  host: string;
  /** agent seconds spent when it was taken (the budget a resume starts from) */
  agentSeconds: number;
  /** taken when the agent phase ended (the one a fork uses by default) */
  final: boolean;
  /** bytes per part: workspace, database, session */
  bytes: Record<string, number>;
  /** removed from the store later in the run (SAASBENCH_SNAPSHOT_KEEP): nothing can start from it */
  deleted?: boolean;
}

/** One move of a rollout to another host after its host was lost. */
export interface HostMove {
  fromHost: string;
  toHost: string;
  /** the snapshot restored on the new host; null when there was none (the agent started over) */
  snapshot: string | null;
  /** why the old host counted as gone */
  reason: string;
  /** agent work lost: from the snapshot (or the phase start) to the old host's last heartbeat, seconds */
  secondsLost: number;
  /** from the old host's last heartbeat to the resumed agent's start (detection + provisioning), seconds */
  downSeconds: number;
  /** workflow time of the move (ms) */
  at: number;
}

/** Where a forked rollout comes from (report.json `parent`, search attribute SaasbenchParent). */
export interface ParentLink {
  workflowId: string;
  rolloutKey: string;
  /** the snapshot the fork started from */
  snapshot: string;
  /** the parent's run folder (the fork adds itself to the parent's report.json `children`) */
  runDir?: string;
}
