import type { Dag } from '../../model/dag';
import { nodeExports, unresolvedPlaceholders } from '../placeholders';
import { topoOrder } from '../../dag/topo';

/**
 * The published evaluator kept ONE context for the whole run: a variable captured by any node was
 * visible to every node that ran later (upstream-harness §4.0), and the published DAGs rely on it
 * (dfhjkeb's `{{ret_cart}}` is captured by a node that is not a prereq of its readers). saasbench
 * scopes variables to a node's prereqs, so for a published task this adds, for each placeholder
 * that no prereq, chain step or variable can produce, an ordering edge (`after`) from every node
 * that captures it and comes earlier in the published run order (Kahn's order, stable in file
 * order — the order the published harness ran nodes in). The reader then runs after those nodes
 * whatever their status and sees their captures; it does not depend on them passing. Edges only
 * point forward in that order, so they cannot make a cycle. Placeholders no earlier node captures
 * stay unresolved (notes at load time, a step failure naming them at run time).
 */
export function addPublishedContextEdges(dag: Dag, rawNodes: readonly unknown[], variables: readonly string[]): { edges: number; nodes: number } {
  const order = topoOrder(dag.nodes);
  const pos = new Map(order.map((id, i) => [id, i]));
  const exportsOf = nodeExports(dag);
  const byId = new Map(dag.nodes.map((n) => [n.id, n]));
  const added = new Map<string, Set<string>>();
  // without the id-capture leniency: an explicit capture of an id by an earlier node is the value the
  // published run used, even where an ancestor's response might also carry one
  for (const u of unresolvedPlaceholders(dag, rawNodes, { variables, publishedIdCapture: false })) {
    const head = u.name.split('.')[0];
    const at = pos.get(u.nodeId);
    if (at === undefined) continue;
    // `{{NODE.var}}` of a node that is not a prereq: that node, when it comes earlier and captures var
    const [, second] = u.name.split('.');
    const named = second !== undefined && exportsOf.get(head)?.has(second) ? head : undefined;
    for (const [producer, names] of exportsOf) {
      if (producer === u.nodeId || (producer !== named && !names.has(head))) continue;
      const p = pos.get(producer);
      if (p === undefined || p >= at) continue;
      (added.get(u.nodeId) ?? added.set(u.nodeId, new Set()).get(u.nodeId)!).add(producer);
    }
  }
  let edges = 0;
  for (const [id, producers] of added) {
    const n = byId.get(id)!;
    n.after = order.filter((x) => producers.has(x));
    edges += n.after.length;
  }
  return { edges, nodes: added.size };
}
