import { formatIssue } from '../errors';
import { loadAnyTask } from '../tasks/load';
import { knownVariables } from '../tasks/placeholders';
import { textTable } from '../report/table';
import { unreachableOf } from '../tasks/unreachable';

/** Print what a task folder holds and everything wrong with it. Exit code 0 only when clean. */
export function validateTaskCommand(dir: string, out: NodeJS.WritableStream = process.stdout): number {
  const loaded = loadAnyTask(dir);
  const { task, issues } = loaded;
  const notes = (loaded as { notes?: string[] }).notes ?? [];
  const w = (l = '') => out.write(`${l}\n`);
  if (task) {
    const nodes = task.dag.nodes;
    const by = (f: (n: (typeof nodes)[number]) => string) => {
      const m = new Map<string, { n: number; max: number }>();
      for (const n of nodes) {
        const e = m.get(f(n)) ?? { n: 0, max: 0 };
        e.n++;
        e.max += n.scoring.maxScore;
        m.set(f(n), e);
      }
      return [...m.entries()].sort().map(([k, v]) => [k, v.n, Math.round(v.max * 1000) / 1000]);
    };
    const total = Math.round(nodes.reduce((a, n) => a + n.scoring.maxScore, 0) * 1000) / 1000;
    const judge = nodes.filter((n) => n.scoring.method === 'llm-judge');
    w(`task ${task.id} (${task.layout} layout)`);
    w(`  dag: ${task.dagFile}`);
    w(`  nodes: ${nodes.length}   total maxScore: ${total}   llm-judge nodes: ${judge.length} (maxScore ${judge.reduce((a, n) => a + n.scoring.maxScore, 0)})`);
    w(`  prereq edges: ${nodes.reduce((a, n) => a + n.prereqs.length, 0)}   roots: ${nodes.filter((n) => n.prereqs.length === 0).length}`);
    const u = unreachableOf(task.dag, nodes, { variables: knownVariables(task), publishedIdCapture: task.publishedIdCapture });
    w(`  unreachable maxScore: ${u.maxScore} of ${total} (published stubs ${u.byCause.stub}, placeholders nothing produces ${u.byCause.placeholder}, behind those ${u.byCause.dependency})`);
    w();
    w(textTable(['method', 'nodes', 'maxScore'], by((n) => n.scoring.method)));
    w();
    w(textTable(['category', 'nodes', 'maxScore'], by((n) => n.scoring.category)));
    const traj = Object.entries(task.dag.trajectories);
    if (traj.length) {
      w();
      w(textTable(['trajectory', 'nodes'], traj.map(([k, t]) => [k, t.nodeIds.length])));
    }
    const unsupported = Object.entries(task.unsupported).sort((a, b) => b[1] - a[1]);
    w();
    if (unsupported.length) {
      w(`primitives not yet supported by this build (${unsupported.length} types, ${unsupported.reduce((a, [, n]) => a + n, 0)} uses):`);
      w(textTable(['type', 'uses'], unsupported));
    } else w('unsupported primitive types: none');
    if (notes.length) {
      w();
      w('notes:');
      for (const n of notes) w(`  - ${n}`);
    }
  }
  w();
  if (issues.length) {
    w(`${issues.length} problem${issues.length > 1 ? 's' : ''}:`);
    for (const i of issues) w(`  ${formatIssue(i)}`);
    return 1;
  }
  w('no problems found');
  return 0;
}
