/**
 * Corpus test for the HTTP dialects: in every published task found (SAASBENCH_PUBLISHED_DIR, or
 * ../shared/upstream; plus SAASBENCH_PUBLISHED_EXTRA_DIR when set) and every DAG variant of it, no
 * step of P04, P05, P14, P16, P23, P24, P26, P27, P28 or P29 has a load issue, and none of these
 * types is left unsupported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { publishedPaths } from '../../src/tasks/published/layout';
import { checkDag } from '../../src/tasks/validate-dag';
import { corpusOpt, publishedTasks } from '../helpers/published';

const MINE = new Set(['P04', 'P05', 'P14', 'P16', 'P23', 'P24', 'P26', 'P27', 'P28', 'P29']);

function allTasks(): string[] {
  const extra = process.env.SAASBENCH_PUBLISHED_EXTRA_DIR;
  const more = extra && existsSync(extra) ? readdirSync(extra).filter((n) => n.startsWith('task_')).sort().map((n) => join(resolve(extra), n)) : [];
  // a task folder still being fetched has no check/ folder yet
  return [...publishedTasks(), ...more].filter((d) => existsSync(join(d, 'check')) && existsSync(join(d, 'tasks')));
}

test('every published DAG loads its HTTP steps without an issue and runs P24/P26/P28/P29', corpusOpt(), () => {
  const problems: string[] = [];
  let steps = 0;
  for (const dir of allTasks()) {
    const task = basename(dir).replace(/^task_/, '');
    for (const file of publishedPaths(dir).dagFiles) {
      const raw = JSON.parse(readFileSync(file, 'utf8')) as { nodes: { primitive_chain?: { type?: string; primitive?: string }[] }[] };
      const typeAt = (path: string) => {
        const m = /nodes\[(\d+)\]\.primitive_chain\[(\d+)\]/.exec(path);
        const s = m ? raw.nodes[Number(m[1])]?.primitive_chain?.[Number(m[2])] : undefined;
        return String(s?.type ?? s?.primitive ?? '').toUpperCase();
      };
      for (const n of raw.nodes) for (const s of n.primitive_chain ?? []) if (MINE.has(String(s.type ?? s.primitive).toUpperCase())) steps++;
      const norm = normalizePublishedDag(raw, { task, file });
      const check = checkDag(norm.dag, file, undefined, { allowZeroMaxScore: true });
      for (const i of [...norm.issues, ...check.issues]) if (MINE.has(typeAt(i.path))) problems.push(`${task}/${basename(file)} ${i.path}: ${i.message}`);
      for (const t of Object.keys(check.unsupported)) if (MINE.has(t)) problems.push(`${task}/${basename(file)}: ${t} unsupported`);
    }
  }
  assert.ok(steps > 1000, `the corpus has HTTP steps (found ${steps})`);
  assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problem(s)`);
});
