import { benchmarkStats, type BenchmarkStats } from '../benchmark/stats';
import { textTable } from '../report/table';
import { BACKBONES } from '../scoring/backbone';

const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-');
const num = (x: number) => String(Math.round(x * 10) / 10);

/** `saasbench benchmark stats <dir>`: the paper's benchmark table, recounted from the task folders. */
export function benchmarkStatsCommand(dir: string, o: { json?: boolean }, out: NodeJS.WritableStream = process.stdout): number {
  const s = benchmarkStats(dir);
  if (o.json) {
    out.write(`${JSON.stringify(s, null, 2)}\n`);
    return 0;
  }
  out.write(renderStats(s));
  return s.total.unmapped.length || s.total.issues ? 1 : 0;
}

export function renderStats(s: BenchmarkStats): string {
  const head = ['task', 'dag', 'nodes', 'maxScore', 'declared', 'judge nodes', 'judge max', ...BACKBONES, 'unreachable', 'problems'];
  const declared = (d: { nodes?: number; maxScore?: number }, t: { nodes: number; maxScore: number }) =>
    d.nodes === undefined && d.maxScore === undefined ? '' : d.nodes === t.nodes && d.maxScore !== undefined && Math.abs(d.maxScore - t.maxScore) < 1e-6 ? '=' : `${d.nodes ?? '?'} / ${d.maxScore === undefined ? '?' : num(d.maxScore)}`;
  const row = (name: string, dag: string, t: { nodes: number; maxScore: number; judgeNodes: number; judgeMaxScore: number; backbone: Record<string, number>; unreachable: { maxScore: number }; issues: number; declared: { nodes?: number; maxScore?: number } }) => [
    name,
    dag,
    t.nodes,
    num(t.maxScore),
    declared(t.declared, t),
    t.judgeNodes,
    num(t.judgeMaxScore),
    ...BACKBONES.map((b) => pct(t.backbone[b] ?? 0, t.maxScore)),
    num(t.unreachable.maxScore),
    t.issues,
  ];
  const lines: string[] = [];
  lines.push(`benchmark ${s.dir}: ${s.total.tasks} task(s)${s.missing.length ? `; missing ${s.missing.length} of the paper's ${s.paper.tasks}: ${s.missing.join(', ')}` : ''}`);
  lines.push('');
  const rows = s.tasks.map((t) => row(t.task, t.dag, t));
  rows.push(row('total', '', s.total));
  lines.push(textTable(head, rows));
  lines.push('');
  const p = s.paper;
  const maxes = s.tasks.map((t) => t.maxScore);
  const cmp = [
    ['tasks', s.total.tasks, p.tasks],
    ['nodes', s.total.nodes, p.nodes],
    ['nodes, as the tasks declare them', s.total.declared.nodes, p.nodes],
    ['total maxScore', num(s.total.maxScore), p.totalMaxScore],
    ['total maxScore, as the tasks declare it', num(s.total.declared.maxScore), p.totalMaxScore],
    ['per-task maxScore', maxes.length ? `${num(Math.min(...maxes))} – ${num(Math.max(...maxes))}` : '-', `${p.perTaskMaxScore.min} – ${p.perTaskMaxScore.max}`],
    ...Object.entries(p.backboneShare).map(([b, share]) => [`${b} share of maxScore`, pct(s.total.backbone[b] ?? 0, s.total.maxScore), `${share}%`]),
  ].map(([what, here, paper]) => [what, here, paper, diff(here, paper)]);
  lines.push(textTable(['', 'counted here', 'the paper', 'difference'], cmp));
  lines.push('(docs/compatibility.md#the-papers-table explains each difference)');
  lines.push('');
  const u = s.total.unreachable;
  lines.push(`unreachable maxScore: ${num(u.maxScore)} (published stubs ${num(u.byCause.stub)}, placeholders nothing produces ${num(u.byCause.placeholder)}, behind those ${num(u.byCause.dependency)}); llm-judge: ${s.total.judgeNodes} nodes, maxScore ${num(s.total.judgeMaxScore)}`);
  lines.push(`unmapped categories: ${s.total.unmapped.length}${s.total.unmapped.length ? ` (${s.total.unmapped.join(', ')}): add them to src/scoring/category_to_backbone.json` : ''}`);
  if (s.total.issues) lines.push(`load problems: ${s.total.issues} (run \`saasbench tasks validate\` on the tasks with problems)`);
  return `${lines.join('\n')}\n`;
}

function diff(here: unknown, paper: unknown): string {
  const a = typeof here === 'number' ? here : parseFloat(String(here));
  const b = typeof paper === 'number' ? paper : parseFloat(String(paper));
  if (Number.isNaN(a) || Number.isNaN(b) || typeof here === 'string' && here.includes('–')) return '';
  const d = Math.round((a - b) * 10) / 10;
  return d === 0 ? '0' : `${d > 0 ? '+' : ''}${d}${String(here).endsWith('%') ? ' pts' : ''}`;
}
