// The one duration formatter (src/model/duration.ts) and the names that delegate to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration } from '../../src/model/duration';
import { fmtSecs } from '../../src/model/sweep';
import { fmtMs } from '../../src/report/html/page';

test('durations: tenths under a minute, then m+ss, then h+mm', () => {
  const cases: [number | undefined, string][] = [
    [undefined, '–'],
    [0, '0s'],
    [4_240, '4.2s'],
    [5_000, '5s'],
    [42_300, '42.3s'],
    [59_960, '1m00s'],
    [65_000, '1m05s'],
    [3_599_000, '59m59s'],
    [3_600_000, '1h00m'],
    [7_380_000, '2h03m'],
  ];
  for (const [ms, want] of cases) assert.equal(formatDuration(ms), want, String(ms));
  assert.equal(fmtSecs(75), '1m15s', 'seconds go through the same formatter');
  assert.equal(fmtMs(4_240), formatDuration(4_240));
});
