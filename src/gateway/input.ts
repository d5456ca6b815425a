/**
 * Reading what crosses the gateway: zod at the boundary, with one clear error that names the
 * protocol, what was read and the JSON path of the first offending value. The schemas are loose
 * (unknown fields are allowed) because agents and providers add fields every month; they pin only
 * what the translation reads.
 */
import { z } from 'zod';
import { SaasbenchError } from '../errors';

export class GatewayInputError extends SaasbenchError {
  /** the same body fails the same way again */
  static override readonly nonRetryable = true;
  constructor(
    readonly what: string,
    readonly path: string,
    detail: string,
  ) {
    super(`${what}: at ${path}: ${detail}`);
  }
}

function pathOf(segs: PropertyKey[]): string {
  return segs.reduce<string>((acc, s) => (typeof s === 'number' ? `${acc}[${s}]` : `${acc}.${String(s)}`), '$');
}

export function readWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new GatewayInputError(what, pathOf(issue.path), issue.message);
}

/** `data:<type>;base64,<data>` URLs are how OpenAI protocols inline images. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : undefined;
}

export function imageUrl(img: { url: string } | { mediaType: string; data: string }): string {
  return 'url' in img ? img.url : `data:${img.mediaType};base64,${img.data}`;
}

/** Tool arguments arrive as JSON text; Anthropic wants an object. Unparseable text is kept, not lost. */
export function argsObject(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const v = JSON.parse(args) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { _raw_arguments: args };
  }
}

/** A block of a type the translation does not read (it is dropped); known types must match their own schema. */
export function otherType(known: string[]) {
  return z.looseObject({ type: z.string().refine((t) => !known.includes(t), { message: 'malformed block of a known type' }) });
}
