// Adding an agent is one folder plus one registry line: these guard that nothing else in src/
// learns agent names again, and that each driver carries the facts the shared code asks for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { agentNames, createAgent } from '../../src/agents/factory';
import { repoRoot } from '../../src/paths';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('no module outside an agent\'s own folder names it as a string', () => {
  const src = join(repoRoot(), 'src');
  // the demo command picks the oracle on purpose; noop is also a workflow trigger type of published tasks
  const allowed = new Set(['cli/main.ts:oracle', 'tasks/published/dialect/workflow.ts:noop']);
  const hits: string[] = [];
  for (const file of sources(src)) {
    const rel = relative(src, file);
    const text = readFileSync(file, 'utf8');
    for (const name of agentNames()) {
      if (rel.startsWith(`agents/${name}/`) || allowed.has(`${rel}:${name}`)) continue;
      if (text.includes(`'${name}'`) || text.includes(`"${name}"`)) hits.push(`${rel}: '${name}'`);
    }
  }
  assert.deepEqual(hits, []);
});

test('every registered driver carries its own facts: model APIs with a relay, a pin with a preinstall, a transcript with a finalizer', () => {
  assert.deepEqual(agentNames().sort(), ['claude-code', 'codex', 'noop', 'openhands', 'oracle']);
  for (const name of agentNames()) {
    const d = createAgent(name);
    assert.equal(d.name, name);
    if (d.cli) {
      assert.ok(d.preinstall, `${name}: a CLI pin needs a preinstall`);
      assert.equal(d.cli.agent, name);
    }
    if (d.transcriptFile) assert.ok(d.finalize, `${name}: a transcript file needs a finalize`);
    if (d.modelApis) assert.ok(d.modelApis.length > 0, `${name}: modelApis must name at least one API`);
  }
  assert.deepEqual(createAgent('codex').modelApis, ['openai']);
  assert.equal(createAgent('oracle').modelApis, undefined, 'the oracle talks to no model');
});
