import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { checkDag } from '../../src/tasks/validate-dag';
import { corpusOpt, publishedTasks } from '../helpers/published';

/**
 * Every DAG of every published task found (SAASBENCH_PUBLISHED_DIR or ../shared/upstream): no load
 * issue remains on a P06, P07 or P15 step — each of their spellings is mapped onto canonical inputs.
 */
const TYPES = new Set(['P06', 'P07', 'P15']);

test('published corpus: no load issue on any P06/P07/P15 step of any DAG', corpusOpt(), () => {
  const left: string[] = [];
  let dags = 0;
  let steps = 0;
  for (const dir of publishedTasks()) {
    const evalDir = join(dir, 'check', `${basename(dir)}_e`, 'evaluate');
    const files = existsSync(evalDir) ? readdirSync(evalDir).filter((f) => /^dag.*\.json$/.test(f)).map((f) => join(evalDir, f)) : [];
    for (const file of files) {
      dags++;
      const raw = JSON.parse(readFileSync(file, 'utf8')) as { nodes: { primitive_chain?: { type?: string; primitive?: string }[] }[] };
      const typeAt = (n: number, s: number) => String(raw.nodes[n]?.primitive_chain?.[s]?.type ?? raw.nodes[n]?.primitive_chain?.[s]?.primitive ?? '').toUpperCase();
      for (const n of raw.nodes) for (const s of n.primitive_chain ?? []) if (TYPES.has(String(s.type ?? s.primitive).toUpperCase())) steps++;
      // the dialects, then the canonical schemas (what the loader does before anything else)
      const n = normalizePublishedDag(raw, { task: basename(dir).replace(/^task_/, ''), file });
      for (const i of [...n.issues, ...checkDag(n.dag, file).issues]) {
        const m = /nodes\[(\d+)\]\.primitive_chain\[(\d+)\]/.exec(i.path);
        if (m && TYPES.has(typeAt(+m[1], +m[2]))) left.push(`${basename(dir)}/${basename(file)} ${i.path}: ${i.message}`);
      }
    }
  }
  assert.ok(dags > 0 && steps > 0, 'the corpus has DAGs with P06/P07/P15 steps');
  assert.deepEqual(left.slice(0, 20), [], `${left.length} issue(s) on P06/P07/P15 steps`);
});
