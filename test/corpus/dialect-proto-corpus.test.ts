import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPublishedTask } from '../../src/tasks/published/load';
import { corpusOpt, publishedTasks } from '../helpers/published';

/** The published types this dialect family maps, and the canonical types they become. */
const PUBLISHED = new Set(['SCREENSHOT', 'RENDER_DOM', 'P18', 'P19', 'P21', 'P22', 'P25', 'P30', 'P_INGEST']);
const CANONICAL = new Set(['SCREENSHOT', 'RENDER_DOM', 'BROWSER_INTERACT', 'DOM_ASSERT', 'P21', 'WEBSOCKET_CHECK', 'GRAPHQL_QUERY', 'OAUTH_FLOW', 'TOTP_CODE', 'METADATA_INGEST', 'PUBLISHED_STUB']);

/** Every published task: the default DAG and the other DAG variants beside it. */
function variants(dir: string): (string | undefined)[] {
  const ev = readdirSync(join(dir, 'check')).find((d) => d.endsWith('_e'));
  const evalDir = ev ? join(dir, 'check', ev, 'evaluate') : '';
  const dags = evalDir && existsSync(evalDir) ? readdirSync(evalDir).filter((f) => /^dag.*\.json$/.test(f)) : [];
  return [undefined, ...dags];
}

const raw = new Map<string, { nodes: { primitive_chain?: { type?: string; primitive?: string }[] }[] }>();
/** The published type of a step (issues of other types belong to other dialect families). */
function publishedType(file: string, node: number, step: number): string {
  if (!raw.has(file)) raw.set(file, JSON.parse(readFileSync(file, 'utf8')));
  const s = raw.get(file)!.nodes[node]?.primitive_chain?.[step];
  return String(s?.type ?? s?.primitive ?? '').toUpperCase();
}

describe('published corpus: browser, realtime, GraphQL, OAuth, TOTP and ingestion steps load', () => {
  test('no load issue inside a step of these types, and none of them is left unsupported, in any DAG variant', corpusOpt(), () => {
    const problems: string[] = [];
    let steps = 0;
    for (const dir of publishedTasks()) {
      for (const dag of variants(dir)) {
        const r = loadPublishedTask(dir, dag ? { dag } : {});
        const task = r.task;
        for (const i of r.issues) {
          const m = /nodes\[(\d+)\]\.primitive_chain\[(\d+)\]/.exec(i.path);
          if (!m) continue;
          const type = publishedType(i.file, +m[1], +m[2]);
          if (PUBLISHED.has(type)) problems.push(`${i.file.split('/').slice(-1)[0]} of ${dir.split('/').pop()}: ${i.path} (${type}): ${i.message}`);
        }
        if (task) {
          for (const t of Object.keys(task.unsupported)) if (PUBLISHED.has(t)) problems.push(`${dir} ${dag ?? ''}: ${t} unsupported`);
          for (const n of task.dag.nodes) for (const s of n.chain) if (CANONICAL.has(s.type)) steps++;
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(steps > 300, `${steps} steps of these types were checked`);
  });
});
