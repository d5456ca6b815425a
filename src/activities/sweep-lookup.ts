import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { describeFailure, notRunReason } from '../errors';
import { summarizeRollout } from '../scoring/benchmark';
import type { TaxonomyThresholds } from '../scoring/taxonomy';
import type { RolloutResult } from '../model/rollout';
import type { FinalState, LookupAnswer, SweepItem } from '../model/sweep';

const STATUS: Record<string, FinalState | 'running'> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
  // a rollout never continues as new; if one did, its chain is still going
  CONTINUED_AS_NEW: 'running',
};

/**
 * Activity: what Temporal holds under each rollout id — nothing, a running execution, or a closed
 * one (for a completed one, its result, summarized). Describe is strongly consistent (no
 * visibility lag), so a sweep never starts a rollout that already exists.
 */
export async function sweepLookupRollouts(i: { items: SweepItem[]; thresholds: TaxonomyThresholds }): Promise<LookupAnswer[]> {
  const ctx = Context.current();
  const client = ctx.client;
  const out: LookupAnswer[] = new Array(i.items.length);
  let next = 0;
  const lane = async () => {
    for (;;) {
      const k = next++;
      if (k >= i.items.length) return;
      out[k] = await lookupOne(client, i.items[k], i.thresholds);
      ctx.heartbeat(k);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, i.items.length) }, lane));
  return out;
}

async function lookupOne(client: Client, item: SweepItem, th: TaxonomyThresholds): Promise<LookupAnswer> {
  const { workflowId } = item;
  const handle = client.workflow.getHandle(workflowId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { workflowId, state: 'absent' };
    throw err;
  }
  const state = STATUS[status] ?? 'failed';
  if (state === 'running') return { workflowId, state: 'running' };
  const base = { workflowId, rolloutKey: item.rolloutKey, taskId: item.taskId, agent: item.agent, model: item.model, repeat: item.repeat, origin: 'earlier' as const };
  if (state === 'completed') {
    const r = (await handle.result()) as RolloutResult;
    return { workflowId, state, summary: summarizeRollout(r, 'earlier', th) };
  }
  let error = `rollout workflow ${status.toLowerCase()}`;
  let notRun: string | undefined;
  if (state === 'failed') {
    try {
      await handle.result();
    } catch (err) {
      error = describeFailure(err).slice(0, 500);
      notRun = notRunReason(err);
    }
  }
  return { workflowId, state, summary: { ...base, state, error, ...(notRun ? { notRun } : {}) } };
}
