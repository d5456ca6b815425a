import { weightedScore } from '../scoring/node-score';
import type { Dag } from '../model/dag';
import { unresolvedPlaceholders } from './placeholders';
import { topoOrder } from '../dag/topo';

export interface Unreachable {
  /** maxScore no run can earn (stubs, unresolvable placeholders, and what depends on them) */
  maxScore: number;
  /** nodes that can never pass (their whole maxScore is unreachable) */
  nodes: string[];
  /** of which: because of a published stub step / an unresolvable placeholder / a prereq that never passes */
  byCause: { stub: number; placeholder: number; dependency: number };
}

const STUB = 'PUBLISHED_STUB';

/**
 * What part of a DAG's maxScore no implementation can earn: a step that is a published stub, or
 * that reads a placeholder nothing can produce, always fails. A binary node with such a step never
 * passes; a weighted node loses that share (and never passes if every step is such a step); an
 * llm-judge node loses everything only if its judge step is one. A node whose prereq never passes
 * is always SKIPPED_DEPENDENCY.
 */
export function unreachableOf(dag: Dag, rawNodes: readonly unknown[], o: { variables: readonly string[]; publishedIdCapture: boolean }): Unreachable {
  const doomed = new Map<string, Set<number>>();
  const mark = (id: string, i: number) => (doomed.get(id) ?? doomed.set(id, new Set()).get(id)!).add(i);
  for (const n of dag.nodes) n.chain.forEach((s, i) => s.type.toUpperCase() === STUB && mark(n.id, i));
  const stubNodes = new Set(doomed.keys());
  const byPath = new Map(dag.nodes.map((n) => [n.id, n]));
  for (const u of unresolvedPlaceholders(dag, rawNodes, o)) {
    const j = /primitive_chain\[(\d+)\]/.exec(u.path);
    if (j && byPath.has(u.nodeId)) mark(u.nodeId, Number(j[1]));
  }
  const never = new Set<string>();
  const byCause = { stub: 0, placeholder: 0, dependency: 0 };
  let lost = 0;
  for (const id of topoOrder(dag.nodes)) {
    const n = byPath.get(id)!;
    const M = n.scoring.maxScore;
    if (n.prereqs.some((p) => never.has(p) || !byPath.has(p))) {
      never.add(id);
      lost += M;
      byCause.dependency += M;
      continue;
    }
    const bad = doomed.get(id);
    if (!bad?.size) continue;
    const cause = stubNodes.has(id) ? 'stub' : 'placeholder';
    const k = n.chain.length;
    let nodeLost = 0;
    if (n.scoring.method === 'binary') nodeLost = M;
    else if (n.scoring.method === 'weighted') nodeLost = bad.size >= k ? M : M - weightedScore(k - bad.size, k, M);
    else if ([...bad].some((i) => ['P17', 'LLM_JUDGE'].includes(n.chain[i].type.toUpperCase()))) nodeLost = M;
    if (nodeLost === M) never.add(id);
    lost += nodeLost;
    byCause[cause] += nodeLost;
  }
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return { maxScore: r3(lost), nodes: [...never], byCause: { stub: r3(byCause.stub), placeholder: r3(byCause.placeholder), dependency: r3(byCause.dependency) } };
}
