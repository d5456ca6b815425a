// The one zod-issue formatter and the one JSON-path renderer (src/zod-issues.ts, src/model/json.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { jsonPath } from '../../src/model/json';
import { firstZodIssue, zodInputIssues, zodIssueText } from '../../src/zod-issues';

test('jsonPath: indices in brackets, odd keys quoted, below a prefix', () => {
  assert.equal(jsonPath(['services', 'app', 'ports', 0]), 'services.app.ports[0]');
  assert.equal(jsonPath(['services', 'my.svc', 'x-y']), 'services["my.svc"].x-y');
  assert.equal(jsonPath([0, 'a']), '[0].a');
  assert.equal(jsonPath(['inputs', 'path'], 'nodes[3]'), 'nodes[3].inputs.path');
  assert.equal(jsonPath([]), '');
});

const S = z.strictObject({ name: z.string(), port: z.number(), tags: z.array(z.string()).optional(), mode: z.union([z.string(), z.strictObject({ kind: z.literal('x') })]).optional() });

test('zod issues: unknown keys at their own path, missing ones "required", unions point into the matched branch', () => {
  const r = S.safeParse({ port: '80', extra: 1, tags: ['a', 2], mode: { kind: 'y' } });
  assert.ok(!r.success);
  const issues = zodInputIssues(r.error, 'f.yml', 'root', 'n1');
  const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
  assert.match(byPath['root.name'], /^required \(a string\)/);
  assert.match(byPath['root.port'], /expected number/);
  assert.match(byPath['root.tags[1]'], /expected string/);
  assert.equal(byPath['root.extra'], 'unknown key "extra"');
  assert.match(byPath['root.mode.kind'], /expected "x"/);
  assert.ok(issues.every((i) => i.file === 'f.yml' && i.nodeId === 'n1'));
});

test('zod issue text: one line, root named, extra issues counted', () => {
  const r = S.safeParse({ name: 1, port: 'x', extra: 1 });
  assert.ok(!r.success);
  assert.equal(zodIssueText(r.error).split('; ').length, 3);
  assert.match(zodIssueText(r.error, { max: 1 }), /^name: .*\(and 2 more problems\)$/);
  const root = z.number().safeParse('x');
  assert.ok(!root.success);
  assert.match(zodIssueText(root.error), /^\(root\): /);
  assert.match(zodIssueText(root.error, { root: '(login)' }), /^\(login\): /);
  assert.equal(firstZodIssue(r.error).more, 2);
});
