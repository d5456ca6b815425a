import { test } from 'node:test';
import { parse as parseDotenvPackage } from 'dotenv';
import assert from 'node:assert/strict';
import {
  interpolate,
  parseDotenv,
  parseDuration,
  parsePort,
  parseVolumeShort,
  parseByteSize,
  shellSplit,
  projectName,
  jsonPath,
  ComposeError,
  SandboxInfraError,
  ImageMissingError,
  SandboxInputError,
} from '../../src/sandbox';

test('interpolation forms', () => {
  const env = { A: 'x', EMPTY: '' };
  const i = (s: string) => interpolate(s, env).value;
  assert.equal(i('${A}'), 'x');
  assert.equal(i('$A-y'), 'x-y');
  assert.equal(i('${B:-def}'), 'def');
  assert.equal(i('${EMPTY:-def}'), 'def');
  assert.equal(i('${EMPTY-def}'), '');
  assert.equal(i('${B-def}'), 'def');
  assert.equal(i('${B:-${A}z}'), 'xz', 'nested default');
  assert.equal(i('${A:+alt}'), 'alt');
  assert.equal(i('${B:+alt}'), '');
  assert.equal(i('$$A and $${A}'), '$A and ${A}');
  assert.equal(i('cost 5$'), 'cost 5$');
  assert.deepEqual(interpolate('${MISSING}/$ALSO', env), { value: '/', missing: ['MISSING', 'ALSO'] });
  assert.throws(() => interpolate('${B:?B is required}', env), /B is required/);
  assert.throws(() => interpolate('${unterminated', env), /unterminated/);
});

test('dotenv parsing', () => {
  const env = parseDotenv(
    ['# comment', 'A=1', 'export B=two words', 'C="quoted # not comment"', "D='single $x'", 'E=val # comment', 'F=', 'G="multi', 'line"', 'noequals'].join('\n'),
  );
  assert.deepEqual(env, { A: '1', B: 'two words', C: 'quoted # not comment', D: 'single $x', E: 'val', F: '', G: 'multi\nline' });
});

test('compose env files keep compose rules where the dotenv package differs', () => {
  const text = ['H=a#b', 'Q="say \\"hi\\" \\\\ done"', 'B=`tick`'].join('\n');
  assert.deepEqual(parseDotenv(text), { H: 'a#b', Q: 'say "hi" \\ done', B: '`tick`' });
  const pkg = parseDotenvPackage(text);
  assert.equal(pkg.H, 'a', 'dotenv cuts at # (compose does not): the reason compose files keep their own parser');
  assert.equal(pkg.B, 'tick', 'dotenv takes backticks as quotes');
});

test('port parsing keeps only the container side', () => {
  assert.deepEqual(parsePort('8080'), { target: 8080, protocol: 'tcp' });
  assert.deepEqual(parsePort('5444:5432'), { target: 5432, protocol: 'tcp' });
  assert.deepEqual(parsePort('127.0.0.1:8080:80'), { target: 80, protocol: 'tcp' });
  assert.deepEqual(parsePort('[::1]:8080:80/udp'), { target: 80, protocol: 'udp' });
  assert.deepEqual(parsePort('8080/tcp'), { target: 8080, protocol: 'tcp' });
  assert.deepEqual(parsePort(3000), { target: 3000, protocol: 'tcp' });
  assert.throws(() => parsePort('8000-8010:8000-8010'), /ranges are not supported/);
  assert.throws(() => parsePort('70000'), /out of range/);
  assert.throws(() => parsePort('80/sctp'), /protocol/);
});

test('duration parsing to nanoseconds', () => {
  assert.equal(parseDuration('5s'), 5e9);
  assert.equal(parseDuration('1m30s'), 90e9);
  assert.equal(parseDuration('1h'), 3600e9);
  assert.equal(parseDuration('500ms'), 5e8);
  assert.equal(parseDuration('1.5s'), 1.5e9);
  assert.equal(parseDuration('10us'), 10e3);
  assert.equal(parseDuration('0'), 0);
  assert.throws(() => parseDuration('5'), /not a duration/);
  assert.throws(() => parseDuration('5 s'), /not a duration/);
  assert.throws(() => parseDuration('1d'), /not a duration/);
});

test('volume short syntax', () => {
  assert.deepEqual(parseVolumeShort('pgdata:/var/lib/postgresql/data'), { type: 'volume', source: 'pgdata', target: '/var/lib/postgresql/data', readOnly: false });
  assert.deepEqual(parseVolumeShort('./init.sql:/docker-entrypoint-initdb.d/01.sql:ro'), { type: 'bind', source: './init.sql', target: '/docker-entrypoint-initdb.d/01.sql', readOnly: true });
  assert.deepEqual(parseVolumeShort('/abs:/x'), { type: 'bind', source: '/abs', target: '/x', readOnly: false });
  assert.deepEqual(parseVolumeShort('/only/target'), { type: 'anonymous', target: '/only/target' });
  assert.throws(() => parseVolumeShort('data:relative'), /absolute/);
  assert.throws(() => parseVolumeShort('data:/x:weird'), /mode "weird"/);
});

test('sizes and command splitting', () => {
  assert.equal(parseByteSize('64m'), 64 * 1024 ** 2);
  assert.equal(parseByteSize('1gb'), 1024 ** 3);
  assert.equal(parseByteSize(1024), 1024);
  assert.throws(() => parseByteSize('lots'), /not a size/);
  assert.deepEqual(shellSplit(`bash -c "echo 'hi there'" x\\ y`), ['bash', '-c', "echo 'hi there'", 'x y']);
  assert.deepEqual(shellSplit(`a '' b`), ['a', '', 'b']);
  assert.throws(() => shellSplit('"open'), /unterminated/);
});

test('project names are docker-safe, bounded and distinct', () => {
  const a = projectName('run-20261129.helpdesk.oracle.none.0');
  assert.match(a, /^run-20261129-helpdesk-oracle-none-0-[0-9a-f]{8}$/);
  assert.notEqual(projectName('Run.A'), projectName('run.a'));
  const long = projectName('x'.repeat(200));
  assert.ok(long.length <= 69, long);
  assert.match(projectName('__weird'), /^weird-[0-9a-f]{8}$/);
});

test('jsonPath formatting', () => {
  assert.equal(jsonPath(['services', 'app', 'ports', 0]), 'services.app.ports[0]');
  assert.equal(jsonPath(['services', 'my.svc']), 'services["my.svc"]');
});

test('error classes carry names and retryability for Temporal', () => {
  const c = new ComposeError('f.yml', 'services.a', 'bad');
  assert.equal(c.name, 'ComposeError');
  assert.equal(c.nonRetryable, true);
  assert.equal(c.message, 'f.yml: services.a: bad');
  assert.ok(c instanceof Error);
  const i = new SandboxInfraError('boom');
  assert.equal(i.name, 'SandboxInfraError');
  assert.equal(i.nonRetryable, false);
  const m = new ImageMissingError('db', 'pg:16');
  assert.equal(m.name, 'ImageMissingError');
  assert.equal(m.nonRetryable, true);
  assert.match(m.message, /service "db".*pg:16/);
  assert.equal(new SandboxInputError('x').name, 'SandboxInputError');
});
