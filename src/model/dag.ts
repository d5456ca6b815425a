import { z } from 'zod';
import { NodeCaptureSchema, type NodeCapture } from './capture';

/**
 * dag.json as written by task authors — ours and the published SaaSBench files. Node-level keys
 * that only carry notes are accepted; anything else is an error so that no key is silently
 * ignored (the published evaluator's key drift inflated scores; see docs/compatibility.md).
 */
export const METHODS = ['binary', 'weighted', 'llm-judge'] as const;
export type Method = (typeof METHODS)[number];

const noteKey = (k: string) => k.startsWith('_');

export const RawStepSchema = z
  .object({
    type: z.string().min(1),
    inputs: z.record(z.string(), z.unknown()).default({}),
    /** an author's notes on the step (published `comment`, `_round…` keys): shown, never scored */
    notes: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const RawScoringSchema = z
  .object({
    category: z.string().min(1),
    subcategory: z.string().optional(),
    method: z
      .enum(['binary', 'weighted', 'llm-judge', 'llm_judge'])
      .transform((m): Method => (m === 'llm_judge' ? 'llm-judge' : m)),
    maxScore: z.number().min(0, 'maxScore must be greater than 0'),
  })
  .catchall(z.unknown())
  .superRefine((v, ctx) => {
    for (const k of Object.keys(v)) {
      if (!['category', 'subcategory', 'method', 'maxScore'].includes(k) && !noteKey(k)) {
        ctx.addIssue({ code: 'custom', path: [k], message: `unknown scoring key "${k}"` });
      }
    }
  });

/** Informational node keys seen in published files; they never change a score. */
const INFO_NODE_KEYS = ['description', 'complexity_tier', 'trajectories', 'notes'];

export const RawNodeSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'node ids use letters, digits, _ . : -'),
    description: z.string().optional(),
    prereqs: z.array(z.string()).default([]),
    primitive_chain: z.array(RawStepSchema).min(1, 'a node needs at least one primitive'),
    scoring: RawScoringSchema,
    complexity_tier: z.string().optional(),
    trajectories: z.array(z.string()).optional(),
    /** documentation of the node (published `evidence`, `kb_refs`, notes): shown in its record, never scored */
    notes: z.record(z.string(), z.unknown()).optional(),
    /** false: the published id capture does not read this node's responses (published `no_entity_capture`) */
    id_capture: z.boolean().optional(),
    /** run after every node without run_last has finished (it changes state the others rely on) */
    run_last: z.boolean().optional(),
    /** variables taken from the responses of this chain's steps (src/primitives/step-captures.ts) */
    captures: z.array(NodeCaptureSchema).optional(),
  })
  .catchall(z.unknown())
  .superRefine((v, ctx) => {
    for (const k of Object.keys(v)) {
      const known = ['id', 'prereqs', 'primitive_chain', 'scoring', 'id_capture', 'run_last', 'captures', ...INFO_NODE_KEYS];
      if (!known.includes(k) && !noteKey(k)) {
        ctx.addIssue({ code: 'custom', path: [k], message: `unknown node key "${k}"` });
      }
    }
  });

export const RawTrajectorySchema = z
  .object({
    description: z.string().optional(),
    node_ids: z.array(z.string()).optional(),
    nodes: z.array(z.string()).optional(),
  })
  .passthrough();

export const RawDagSchema = z
  .object({
    meta: z.record(z.string(), z.unknown()).optional(),
    scoring_config: z.record(z.string(), z.unknown()).optional(),
    trajectories: z.record(z.string(), RawTrajectorySchema).optional(),
    nodes: z.array(z.unknown()).min(1, 'the DAG has no nodes'),
  })
  .passthrough();

export type RawNode = z.infer<typeof RawNodeSchema>;

export interface DagStep {
  type: string;
  inputs: Record<string, unknown>;
  notes?: Record<string, unknown>;
}
export interface DagNode {
  id: string;
  description: string;
  prereqs: string[];
  chain: DagStep[];
  scoring: { category: string; subcategory: string; method: Method; maxScore: number };
  complexityTier?: string;
  notes?: Record<string, unknown>;
  /** false: no published id capture on this node's responses */
  idCapture?: boolean;
  runLast?: boolean;
  /** variables taken from the responses of its steps (dag.json `captures`) */
  captures?: NodeCapture[];
  /**
   * Nodes this one runs after without depending on them: it reads variables they capture (the
   * published evaluator's run-wide context; computed by the published loader). Their status does
   * not matter; their captures are visible.
   */
  after?: string[];
}
export interface Dag {
  nodes: DagNode[];
  /** trajectory name -> node ids (only ids that exist) */
  trajectories: Record<string, { description: string; nodeIds: string[] }>;
}
