import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { dialectRows, readSpellingsFrom, rowKey } from '../../src/benchmark/dialects';
import { repoRoot } from '../../src/paths';
import { corpusOpt, publishedDir } from '../helpers/published';

// docs/compatibility.md#published-spellings is generated (`saasbench benchmark dialects --write-docs`);
// every mapping the loader makes on the published corpus must be listed there with its tasks.
test('docs/compatibility.md lists every published spelling the loader maps, with the tasks that use it', corpusOpt(), () => {
  const doc = readSpellingsFrom(join(repoRoot(), 'docs', 'compatibility.md'));
  assert.ok(doc.size > 100, 'the generated table is in the doc');
  const missing: string[] = [];
  for (const r of dialectRows([publishedDir()!])) {
    const tasks = doc.get(rowKey(r));
    if (!tasks) missing.push(`${r.primitive} ${r.spelling} → ${r.canonical}`);
    else for (const t of r.tasks) if (!tasks.includes(t)) missing.push(`${r.primitive} ${r.spelling}: task ${t}`);
  }
  assert.deepEqual(missing.slice(0, 20), [], `${missing.length} mapping(s) not in the doc: run saasbench benchmark dialects <published dirs> --write-docs`);
});
