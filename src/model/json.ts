import { z } from 'zod';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
export const JsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonSchema), z.record(z.string(), JsonSchema)]),
);
export type JsonObject = { [k: string]: Json };

/**
 * A key path as a JSON path (`services.app.ports[0]`, below `prefix` when given): indices in
 * brackets, keys that are not plain identifiers quoted (`services["my.svc"]`) so the path reads
 * back unambiguously. The one renderer for zod issue paths and hand-made ones alike.
 */
export function jsonPath(parts: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix;
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (typeof p === 'string' && !/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(p)) out += `[${JSON.stringify(p)}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}
