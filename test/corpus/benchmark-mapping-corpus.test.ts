import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchmarkStats } from '../../src/benchmark/stats';
import { corpusOpt, publishedDir } from '../helpers/published';

test('the published corpus: every category maps to a backbone', corpusOpt(), () => {
  const s = benchmarkStats(publishedDir()!);
  assert.ok(s.total.tasks >= 1);
  assert.deepEqual(s.total.unmapped, []);
});
