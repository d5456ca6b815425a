/** Pure graph helpers shared by loaders and by workflow code (no imports: safe in the workflow bundle). */

export interface GraphNode {
  id: string;
  prereqs: readonly string[];
}

/** Kahn's algorithm, stable in file order: the order chain context is merged in. */
export function topoOrder(nodes: readonly GraphNode[]): string[] {
  const indeg = new Map(nodes.map((n) => [n.id, 0]));
  const children = new Map<string, string[]>();
  for (const n of nodes) for (const p of n.prereqs) if (indeg.has(p)) {
    indeg.set(n.id, indeg.get(n.id)! + 1);
    (children.get(p) ?? children.set(p, []).get(p)!).push(n.id);
  }
  const order: string[] = [];
  const ready = nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  while (ready.length) {
    const id = ready.shift()!;
    order.push(id);
    for (const c of children.get(id) ?? []) {
      indeg.set(c, indeg.get(c)! - 1);
      if (indeg.get(c) === 0) ready.push(c);
    }
  }
  return order;
}

/** Every transitive prereq of `id`, in topological order (the order chain context is merged in). */
export function ancestorsInOrder(id: string, nodes: readonly GraphNode[], order: readonly string[]): string[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.prereqs ?? [])];
  while (stack.length) {
    const p = stack.pop()!;
    if (seen.has(p) || !byId.has(p)) continue;
    seen.add(p);
    stack.push(...byId.get(p)!.prereqs);
  }
  return order.filter((x) => seen.has(x));
}
