import { z } from 'zod';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
export const JsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonSchema), z.record(z.string(), JsonSchema)]),
);
export type JsonObject = { [k: string]: Json };

/** Render a zod issue path as a JSON path (`a.b[2].c`). */
export function jsonPath(parts: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix;
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}
