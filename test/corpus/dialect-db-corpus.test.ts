import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { loadPublishedTask } from '../../src/tasks/published/load';
import { checkDag } from '../../src/tasks/validate-dag';
import { corpusOpt, publishedTasks } from '../helpers/published';

/** The step types this corpus test answers for (the database/files/exec dialects). */
const TYPES = ['P01', 'P02', 'P03', 'P08', 'P09', 'P10', 'P11', 'P12'];

/**
 * Issues of every DAG variant of every published task that point into a step of TYPES (or a
 * node's forbid_elixir_errors): the dialects and canonical schemas on every DAG file, and — for
 * complete task folders — the whole loader (which also checks P08–P11 database names).
 */
function issuesOfOurTypes(): string[] {
  const out: string[] = [];
  for (const dir of publishedTasks()) {
    if (!existsSync(`${dir}/check`)) continue;
    // the DAG files are listed directly: a folder still being fetched may lack tasks/
    const evalDir = join(dir, 'check', `${basename(dir)}_e`, 'evaluate');
    const dagFiles = existsSync(evalDir) ? readdirSync(evalDir).filter((f) => /^dag.*\.json$/.test(f)).map((f) => join(evalDir, f)) : [];
    for (const dagFile of dagFiles) {
      let raw: { nodes?: { primitive_chain?: { type?: string; primitive?: string }[] }[] } = {};
      try {
        raw = JSON.parse(readFileSync(dagFile, 'utf8'));
      } catch {
        continue;
      }
      const task = basename(dir).replace(/^task_/, '');
      const norm = normalizePublishedDag(raw, { task, file: dagFile });
      const issues = [...norm.issues, ...checkDag(norm.dag, dagFile, undefined, { allowZeroMaxScore: true }).issues];
      if (existsSync(`${dir}/tasks`)) issues.push(...loadPublishedTask(dir, { dag: basename(dagFile), derivedDir: `/tmp/saasbench-corpus-${basename(dir)}` }).issues);
      for (const i of issues) {
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
