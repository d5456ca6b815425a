import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { VarName } from './p04-http-request';
import { definePrimitive } from './types';

export const TotpCodeSchema = z
  .object({
    /** the shared secret, base32 (RFC 4648; spaces and padding ignored), usually `{{some_var}}` */
    secret: z.string().min(1),
    digits: z.number().int().min(6).max(8).default(6),
    step_seconds: z.number().int().min(1).max(300).default(30),
    /** time steps added to now (−1: the previous code) */
    offset: z.number().int().min(-10).max(10).default(0),
    algorithm: z.enum(['sha1', 'sha256', 'sha512']).default('sha1'),
    /** the chain variable (exported) that receives the code */
    store_as: VarName.default('mfa_code'),
  })
  .strict();

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Decode(s: string): Buffer {
  const clean = s.toUpperCase().replace(/[\s=-]/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of clean) {
    const i = B32.indexOf(c);
    if (i < 0) throw new Error(`not base32: ${JSON.stringify(c)}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 TOTP (RFC 4226 HOTP over the time step). */
export function totp(secret: Buffer, o: { time: number; step: number; digits: number; algorithm: string }): string {
  const counter = Math.floor(o.time / 1000 / o.step);
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const h = createHmac(o.algorithm, secret).update(msg).digest();
  const off = h[h.length - 1] & 0x0f;
  const bin = ((h[off] & 0x7f) << 24) | (h[off + 1] << 16) | (h[off + 2] << 8) | h[off + 3];
  return String(bin % 10 ** o.digits).padStart(o.digits, '0');
}

/** TOTP_CODE: compute the current one-time code of a TOTP secret (an MFA enrolment) into a variable. */
export const TOTP_CODE = definePrimitive({
  id: 'TOTP_CODE',
  name: 'totp_code',
  schema: TotpCodeSchema,
  produces: (i) => ({ exported: [typeof i.store_as === 'string' ? i.store_as : 'mfa_code'], local: [] }),
  async run(input, ctx) {
    let key: Buffer;
    try {
      key = base32Decode(input.secret);
    } catch (e) {
      return { passed: false, message: `the TOTP secret is not base32: ${(e as Error).message}` };
    }
    if (key.length < 10) return { passed: false, message: `the TOTP secret decodes to ${key.length} bytes (need ≥ 10)` };
    const code = totp(key, { time: Date.now() + input.offset * input.step_seconds * 1000, step: input.step_seconds, digits: input.digits, algorithm: input.algorithm });
    ctx.setVar(input.store_as, code);
    return { passed: true, message: `${input.digits}-digit TOTP code in ${input.store_as}`, data: { store_as: input.store_as, digits: input.digits } };
  },
});
