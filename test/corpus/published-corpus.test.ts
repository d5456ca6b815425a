import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basename } from 'node:path';
import { PassThrough } from 'node:stream';
import { validateTaskCommand } from '../../src/cli/tasks-validate';
import { corpusOpt, publishedTasks } from '../helpers/published';

// Issue 10 acceptance: every published task validates with no error, runs nothing unsupported and,
// with the benchmark pack, has no undeclared role. One test per task so a failure names the task.
for (const dir of publishedTasks()) {
  test(`published ${basename(dir)}: tasks validate exits 0, nothing unsupported, 0 roles missing`, () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b));
    const code = validateTaskCommand(dir, out);
    const problems = text.split('\n').filter((l) => /^\s+\/.*: /.test(l)).slice(0, 5).join('\n');
    assert.equal(code, 0, `${basename(dir)} has load problems, e.g.:\n${problems}`);
    assert.match(text, /unsupported primitive types: none/);
    assert.match(text, /roles: \d+ used \([^)]*\), \d+ declared, 0 missing/);
  });
}
test('the published corpus is present (else every test above is absent)', corpusOpt(), () => {
  assert.ok(publishedTasks().length > 0);
});
