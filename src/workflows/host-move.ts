import { ActivityFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { isCancellation, patched, type proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities';
import { failureType } from '../errors';
import type { AgentRunSummary, Provisioned, RolloutInput, RolloutProgress, RolloutRef } from '../model/rollout';
import type { HostMove } from '../model/snapshot';

type Acts = ReturnType<typeof proxyActivities<typeof activities>>;

/** A rollout moves at most this often: a run that loses host after host has a problem of its own. */
export const MAX_MOVES = 3;
/** The patch marker of the host-move branch (recorded histories replay without it). */
export const HOST_MOVE_PATCH = 'saasbench-host-move';

export interface HostActs {
  acts: Acts;
  agent: Acts;
  teardown: Acts;
}

export interface AgentPhaseState {
  prov: Provisioned;
  ref: RolloutRef;
  host: HostActs;
  moves: HostMove[];
}

export interface AgentPhaseDeps {
  input: RolloutInput;
  shared: Acts;
  onHost(hostQueue: string): HostActs;
  progress: RolloutProgress;
  provisionInput: Parameters<Acts['provision']>[0];
  /** called when the rollout moved (progress text, search attributes) */
  onMove(state: AgentPhaseState): void;
}

/**
 * Why the host counts as gone, or null: a runAgent retry nobody picked up within hostLossSeconds
 * (its worker is dead: schedule-to-start timeout on the host queue), or the activity found the
 * rollout's containers missing (HostLostError).
 */
export function hostLostReason(err: unknown, input: RolloutInput): string | null {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (cause instanceof TimeoutFailure && cause.timeoutType === TimeoutType.SCHEDULE_TO_START) return `host queue unpolled for ${input.hostLossSeconds}s`;
  if (failureType(err) === 'HostLostError') return 'rollout containers missing on the host';
  return null;
}

/** The last heartbeat of the lost attempt (SupervisionState.lastBeatAt): the old host's last sign of life. */
function lastSignOfLife(err: unknown): number | null {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  const d = cause instanceof TimeoutFailure ? (cause.lastHeartbeatDetails as { lastBeatAt?: unknown } | undefined) : undefined;
  return typeof d?.lastBeatAt === 'number' ? d.lastBeatAt : null;
}

/**
 * The agent phase, surviving the loss of its host: provision the stack again on any host (shared
 * queue), restore the latest snapshot there and resume the agent's session with the remaining
 * budget. Forks start from their parent's snapshot (workspace and databases, a fresh agent).
 */
export async function agentPhase(state: AgentPhaseState, d: AgentPhaseDeps): Promise<AgentRunSummary> {
  const { input } = d;
  let restore = input.fromSnapshot ? { rolloutKey: input.fromSnapshot.rolloutKey, seq: input.fromSnapshot.seq, session: false } : undefined;
  for (;;) {
    const run = { ref: state.ref, agent: input.agent, model: input.model, budgetSeconds: input.budgetSeconds, idleSeconds: input.idleSeconds, retry: input.agentRetry, snapshotSeconds: input.snapshotSeconds };
    const calledAt = Date.now();
    try {
      return await state.host.agent.runAgent(restore ? { ...run, restore } : run);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const reason = hostLostReason(err, input);
      if (!reason || state.moves.length >= MAX_MOVES || !patched(HOST_MOVE_PATCH)) throw err;
      // no heartbeat at all: the agent never started there; its call is the last we know of the host
      const signOfLife = lastSignOfLife(err) ?? calledAt;
      const snap = await d.shared.latestSnapshot({ rolloutKey: state.ref.rolloutKey });
      // the old host's worker is alive when only its containers vanished: let it clean up
      if (failureType(err) === 'HostLostError') await state.host.teardown.teardown({ rolloutKey: state.ref.rolloutKey }).catch(() => undefined);
      const fromHost = state.prov.host;
      const prov = await d.shared.provision(d.provisionInput);
      const host = d.onHost(prov.hostQueue);
      const ref: RolloutRef = { ...state.ref, runDir: prov.runDir, stack: prov.stack, taskHash: prov.plan.taskHash };
      // newer workflows had provision prepare the workspace (rollout.ts)
      if (!d.provisionInput.prepare) await host.acts.prepareWorkspace({ ref, agent: input.agent, model: input.model });
      const resumedAt = Date.now();
      const lostFrom = snap?.takenAt ?? d.progress.phaseStartedAt;
      state.moves.push({
        fromHost, toHost: prov.host, snapshot: snap?.id ?? null, reason,
        // agent work after the snapshot that the old host took with it
        secondsLost: Math.max(0, Math.round((signOfLife - lostFrom) / 1000)),
        downSeconds: Math.max(0, Math.round((resumedAt - signOfLife) / 1000)),
        at: resumedAt,
      });
      Object.assign(state, { prov, ref, host });
      // with a snapshot: its workspace, databases and session; without one the agent starts over
      restore = snap ? { rolloutKey: state.ref.rolloutKey, seq: snap.seq, session: true } : undefined;
      d.onMove(state);
    }
  }
}
