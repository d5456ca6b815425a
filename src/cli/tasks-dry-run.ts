import { writeFileSync } from 'node:fs';
import { dryRunTask } from '../evaluation/dry-run';
import { SCORE_HEADER, scoreSections } from '../report/score-rows';
import { textTable } from '../report/table';
import { loadTaskOrThrow } from '../tasks/load-native';
import { loadAnyTask } from '../tasks/load';

/**
 * `saasbench tasks dry-run <task>` (and `run --dry-run`): the DAG walked without running a
 * primitive — every node DRY_RUN, each step's inputs resolved as far as the task's variables go,
 * and for every other placeholder where its value comes from. For task authors checking a DAG.
 */
export function dryRunCommand(dir: string, o: { json?: boolean; node?: string; out?: string }, out: NodeJS.WritableStream = process.stdout): number {
  const task = loadTaskOrThrow(dir, loadAnyTask);
  const r = dryRunTask(task);
  if (o.out) writeFileSync(o.out, `${JSON.stringify(r, null, 2)}\n`);
  if (o.json) {
    out.write(`${JSON.stringify(o.node ? r.nodes.filter((n) => n.nodeId === o.node) : r, null, 2)}\n`);
    return 0;
  }
  const w = (l = '') => out.write(`${l}\n`);
  const shown = o.node ? r.nodes.filter((n) => n.nodeId === o.node) : r.nodes;
  if (o.node && !shown.length) {
    w(`no node ${o.node} in ${task.id}`);
    return 1;
  }
  const pending = new Map<string, number>();
  for (const n of r.nodes) for (const s of n.steps) for (const src of Object.values(s.pending)) pending.set(src.startsWith('captured') ? 'captured at run time' : src, (pending.get(src.startsWith('captured') ? 'captured at run time' : src) ?? 0) + 1);
  w(`dry run of ${task.id}: ${r.nodes.length} nodes, nothing executed, every node DRY_RUN`);
  if (o.node) {
    for (const n of shown) {
      w(`${n.nodeId}  prereqs: ${n.prereqs.join(', ') || 'none'}${n.after.length ? `  runs after: ${n.after.join(', ')}` : ''}`);
      for (const s of n.steps) {
        w(`  ${s.index} ${s.type} ${JSON.stringify(s.inputs)}`);
        for (const [name, src] of Object.entries(s.pending)) w(`      {{${name}}}: ${src}`);
      }
    }
  } else {
    for (const sec of scoreSections(r.score).filter((x) => x.title === 'By backbone' || x.title === 'Task')) {
      w();
      w(sec.title);
      w(textTable(SCORE_HEADER, sec.rows));
    }
    w();
    w(`placeholders left for run time: ${[...pending.entries()].map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}`);
    const nothing = r.nodes.flatMap((n) => n.steps.flatMap((s) => Object.entries(s.pending).filter(([, src]) => src === 'nothing produces it').map(([name]) => `${n.nodeId}#${s.index} {{${name}}}`)));
    if (nothing.length) w(`nothing produces: ${nothing.slice(0, 20).join(', ')}${nothing.length > 20 ? ` … (${nothing.length})` : ''}`);
    w('`--node <id>` shows one node\'s resolved steps; `--json` everything');
  }
  return 0;
}
