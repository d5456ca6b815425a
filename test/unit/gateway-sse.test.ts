// The SSE parser must give the same events however the bytes are cut (through CRLFs and UTF-8
// sequences), and the writer's frames must parse back to what was written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, sseFrame, type SseEvent } from '../../src/gateway';
import { splitBytes } from '../fakes/gateway-samples';

const TEXT = 'event: a\r\ndata: {"x":"héllo 世界"}\r\n\r\n: comment\n\nid: 7\ndata: line1\ndata:line2\n\nevent: b\rdata: 🎉\r\rdata: last-without-blank-line';

function parseAll(chunks: (Uint8Array | string)[]): SseEvent[] {
  const p = new SseParser();
  return [...chunks.flatMap((c) => p.push(c)), ...p.end()];
}

const EXPECTED: SseEvent[] = [
  { event: 'a', data: '{"x":"héllo 世界"}' },
  { data: 'line1\nline2', id: '7' },
  { event: 'b', data: '🎉', id: '7' },
  { data: 'last-without-blank-line', id: '7' },
];

test('sse: whole input parses into the expected events (CRLF, CR, LF, comments, multi-line data, id)', () => {
  assert.deepEqual(parseAll([TEXT]), EXPECTED);
});

test('sse: every single-byte split and random splits give the same events', () => {
  const bytes = Buffer.from(TEXT, 'utf8');
  assert.deepEqual(parseAll([...bytes].map((b) => new Uint8Array([b]))), EXPECTED);
  for (let seed = 1; seed <= 40; seed++) assert.deepEqual(parseAll(splitBytes(TEXT, seed, 5)), EXPECTED, `seed ${seed}`);
  // a split between CR and LF must not produce an empty event boundary
  assert.deepEqual(parseAll(['data: x\r', '\ndata: y\r\n\r\n']), [{ data: 'x\ny' }]);
});

test('sse: frames written by sseFrame parse back, [DONE] stays a bare string', () => {
  const frames = sseFrame({ a: 1, s: 'two\nlines' }, 'evt') + sseFrame('[DONE]');
  assert.equal(frames, 'event: evt\ndata: {"a":1,"s":"two\\nlines"}\n\ndata: [DONE]\n\n');
  assert.deepEqual(parseAll([frames]), [{ event: 'evt', data: '{"a":1,"s":"two\\nlines"}' }, { data: '[DONE]' }]);
  assert.deepEqual(parseAll([sseFrame('x\ny')]), [{ data: 'x\ny' }]);
});
