import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { loadPublishedTask } from '../../src/tasks/published/load';
import { publishedPaths } from '../../src/tasks/published/layout';
import { corpusOpt, publishedTasks } from '../helpers/published';

/** The step types this corpus test answers for (the database/files/exec dialects). */
const TYPES = ['P01', 'P02', 'P03', 'P08', 'P09', 'P10', 'P11', 'P12'];

/** Issues of every DAG variant of every published task that point into a step of TYPES (or a node's forbid_elixir_errors). */
function issuesOfOurTypes(): string[] {
  const out: string[] = [];
  for (const dir of publishedTasks()) {
    if (!existsSync(`${dir}/check`)) continue;
    for (const dagFile of publishedPaths(dir).dagFiles) {
      const r = loadPublishedTask(dir, { dag: basename(dagFile), derivedDir: `/tmp/saasbench-corpus-${basename(dir)}` });
      let raw: { nodes?: { primitive_chain?: { type?: string; primitive?: string }[] }[] } = {};
      try {
        raw = JSON.parse(readFileSync(dagFile, 'utf8'));
      } catch {
        continue;
      }
      for (const i of r.issues) {
        const m = /nodes\[(\d+)\]\.primitive_chain\[(\d+)\]/.exec(i.path);
        const step = m ? raw.nodes?.[+m[1]]?.primitive_chain?.[+m[2]] : undefined;
        const type = String(step?.type ?? step?.primitive ?? '').toUpperCase();
        if (TYPES.includes(type) || /forbid_elixir_errors/.test(i.path)) out.push(`${basename(dir)}/${basename(dagFile)} ${i.path}: ${i.message}`);
      }
    }
  }
  return out;
}

test('every published DAG variant loads with no P01–P03, P08–P12 issue', corpusOpt(), () => {
  assert.ok(publishedTasks().length > 0);
  const issues = issuesOfOurTypes();
  assert.deepEqual(issues.slice(0, 20), [], `${issues.length} issue(s)`);
});
