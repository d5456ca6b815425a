import { formatIssue } from '../errors';
import { importPublishedTask, type ImportOptions } from '../tasks/import-published';

/** `saasbench tasks import <published dir> --out <dir>`: write a native task folder; exit 0 when it validates. */
export function importTaskCommand(src: string, o: ImportOptions, out: NodeJS.WritableStream = process.stdout): number {
  const r = importPublishedTask(src, o);
  const w = (l = '') => out.write(`${l}\n`);
  if (r.written.length) {
    w(`wrote ${r.written.length} files into ${o.out}`);
    if (r.task) {
      const nodes = r.task.dag.nodes;
      const total = Math.round(nodes.reduce((a, n) => a + n.scoring.maxScore, 0) * 1000) / 1000;
      w(`  task ${r.task.id}: ${nodes.length} nodes, total maxScore ${total}, llm-judge nodes ${nodes.filter((n) => n.scoring.method === 'llm-judge').length}`);
    }
  }
  if (r.notes.length) {
    w();
    w('notes:');
    for (const n of r.notes) w(`  - ${n}`);
  }
  w();
  if (r.issues.length) {
    w(`${r.issues.length} problem${r.issues.length > 1 ? 's' : ''}:`);
    for (const i of r.issues) w(`  ${formatIssue(i)}`);
    return 1;
  }
  w(`imported: validate again with \`saasbench tasks validate ${o.out}\``);
  return 0;
}
