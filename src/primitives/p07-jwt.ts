import { createHmac, timingSafeEqual } from 'node:crypto';
import { deepEqual, isPlainObject, show } from './compare';

/**
 * The `jwt` operator of P07: the value is a compact JWS whose header names the expected algorithm
 * and whose claims pass the listed checks. The published jwt_decode (task_mnmtxiwb) only decoded
 * the payload; here the structure, the algorithm (never `none` unless asked) and the signature
 * segment are checked, and the HMAC itself when the test knows the `secret`.
 */
export type ClaimCheck = 'present' | 'uuid' | 'future' | 'past' | { future_within_seconds: number } | { equals: unknown };
export interface JwtExpectation {
  algorithm?: string;
  claims?: Record<string, ClaimCheck>;
  /** HS256/384/512 key; when given, the signature is verified */
  secret?: string;
}

const B64URL = /^[A-Za-z0-9_-]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HMAC: Record<string, { hash: string; bytes: number }> = { HS256: { hash: 'sha256', bytes: 32 }, HS384: { hash: 'sha384', bytes: 48 }, HS512: { hash: 'sha512', bytes: 64 } };

/** Why `e` is not a valid expectation (schema error), or undefined. */
export function jwtExpectationProblem(e: Record<string, unknown>): string | undefined {
  for (const k of Object.keys(e)) if (!['algorithm', 'claims', 'secret'].includes(k)) return `jwt: unknown key "${k}"`;
  if (e.algorithm !== undefined && typeof e.algorithm !== 'string') return 'jwt: algorithm must be a string';
  if (e.secret !== undefined && (typeof e.secret !== 'string' || !HMAC[String(e.algorithm)])) return 'jwt: secret needs an HS256/HS384/HS512 algorithm';
  if (e.claims === undefined) return undefined;
  if (!isPlainObject(e.claims)) return 'jwt: claims must be an object';
  for (const [name, c] of Object.entries(e.claims)) {
    const ok = c === 'present' || c === 'uuid' || c === 'future' || c === 'past'
      || (isPlainObject(c) && Object.keys(c).length === 1 && (('equals' in c) || (typeof c.future_within_seconds === 'number' && c.future_within_seconds > 0)));
    if (!ok) return `jwt: claim "${name}" check must be present|uuid|future|past|{future_within_seconds: n}|{equals: v}`;
  }
  return undefined;
}

function decodeJson(seg: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(Buffer.from(seg, 'base64url').toString('utf8')) as unknown;
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function checkJwt(actual: unknown, e: JwtExpectation): { passed: boolean; reason?: string } {
  const fail = (reason: string) => ({ passed: false, reason });
  if (typeof actual !== 'string') return fail('jwt needs a string token');
  const parts = actual.split('.');
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return fail('not a compact JWS (three base64url segments)');
  const header = decodeJson(parts[0]);
  const claims = decodeJson(parts[1]);
  if (!header || !claims) return fail('header or payload is not base64url JSON');
  const alg = header.alg;
  if (e.algorithm !== undefined && alg !== e.algorithm) return fail(`alg ${show(alg)} ≠ ${e.algorithm}`);
  if (alg === 'none' && e.algorithm !== 'none') return fail('the token is unsigned (alg none)');
  if (alg !== 'none') {
    if (parts[2] === '') return fail('the signature segment is empty');
    const h = HMAC[String(alg)];
    if (h && Buffer.from(parts[2], 'base64url').length !== h.bytes) return fail(`${String(alg)} signature is not ${h.bytes} bytes`);
  }
  if (e.secret !== undefined) {
    const h = HMAC[String(alg)];
    const want = createHmac(h.hash, e.secret).update(`${parts[0]}.${parts[1]}`).digest();
    const got = Buffer.from(parts[2], 'base64url');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return fail('the HMAC signature does not verify with the given secret');
  }
  const now = Date.now() / 1000;
  for (const [name, check] of Object.entries(e.claims ?? {})) {
    const v = claims[name];
    if (v === undefined) return fail(`claim ${name} is missing`);
    if (check === 'uuid' && !(typeof v === 'string' && UUID.test(v))) return fail(`claim ${name} ${show(v, 60)} is not a UUID`);
    if ((check === 'future' || check === 'past' || (isPlainObject(check) && 'future_within_seconds' in check)) && typeof v !== 'number') return fail(`claim ${name} is not a numeric date`);
    if (check === 'future' && (v as number) <= now) return fail(`claim ${name} is not in the future`);
    if (check === 'past' && (v as number) > now) return fail(`claim ${name} is in the future`);
    if (isPlainObject(check) && 'future_within_seconds' in check) {
      const d = (v as number) - now;
      if (d <= 0 || d > (check.future_within_seconds as number)) return fail(`claim ${name} is ${Math.round(d)} s ahead, expected within (0, ${check.future_within_seconds as number}]`);
    }
    if (isPlainObject(check) && 'equals' in check && !deepEqual(v, check.equals)) return fail(`claim ${name} ${show(v, 60)} ≠ ${show(check.equals, 60)}`);
  }
  return { passed: true, reason: `alg ${String(alg)}, ${Object.keys(e.claims ?? {}).length} claim check(s)` };
}
