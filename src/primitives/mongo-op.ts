import { z } from 'zod';
import { Binary, BSON, Decimal128, Double, Int32, Long, ObjectId, Timestamp, type Db, type Document } from 'mongodb';
import { JsonSchema, type Json } from '../model/json';

/**
 * A MongoDB read as data (never shell text): which collection, which operation, and its
 * arguments. Values in `filter` / `pipeline` are MongoDB Extended JSON, so `{"$oid": "…"}` is an
 * ObjectId and `{"$date": "…"}` a date; placeholders are resolved before it is decoded.
 */
const Obj = z.record(z.string(), JsonSchema);

export const MongoOpSchema = z
  .object({
    collection: z.string().min(1),
    operation: z.enum(['find', 'findOne', 'countDocuments', 'aggregate', 'distinct']),
    filter: Obj.optional(),
    projection: Obj.optional(),
    sort: Obj.optional(),
    limit: z.number().int().positive().max(10_000).optional(),
    pipeline: z.array(Obj).optional(),
    /** distinct: the field */
    field: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.operation === 'aggregate' && !v.pipeline) ctx.addIssue({ code: 'custom', path: ['pipeline'], message: 'aggregate needs a pipeline' });
    if (v.operation !== 'aggregate' && v.pipeline) ctx.addIssue({ code: 'custom', path: ['pipeline'], message: 'pipeline applies to aggregate' });
    if (v.operation === 'distinct' && !v.field) ctx.addIssue({ code: 'custom', path: ['field'], message: 'distinct needs a field' });
  });
export type MongoOp = z.infer<typeof MongoOpSchema>;

/** What P08 and the schema primitives (P09–P11) ask of a MongoDB database. */
export type MongoRequest =
  | MongoOp
  | { operation: 'listCollections' }
  | { operation: 'listIndexes'; collection: string }
  | { operation: 'sample'; collection: string; limit: number }
  | { operation: 'schemaFields'; collection: string };

/** Field paths a $jsonSchema declares (nested object properties dotted). */
function schemaPaths(schema: unknown, prefix = '', out: string[] = []): string[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (props && typeof props === 'object') {
    for (const [k, v] of Object.entries(props)) {
      out.push(prefix + k);
      schemaPaths(v, `${prefix}${k}.`, out);
    }
  }
  return out;
}

const ROWS_CAP = 1000;

/**
 * A BSON value as plain JSON for checks and reports: ObjectId → its hex string, Date → ISO text,
 * Decimal128/Long → number when exact, else text; binary → base64.
 */
export function bsonToJson(v: unknown): Json {
  if (v === null || v === undefined) return null;
  if (v instanceof ObjectId) return v.toHexString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Long) return Number.isSafeInteger(v.toNumber()) ? v.toNumber() : v.toString();
  if (v instanceof Decimal128) {
    const n = Number(v.toString());
    return Number.isFinite(n) && String(n) === v.toString() ? n : v.toString();
  }
  if (v instanceof Double || v instanceof Int32) return v.valueOf();
  if (v instanceof Timestamp) return v.toString();
  if (v instanceof Binary) return Buffer.from(v.buffer).toString('base64');
  if (Array.isArray(v)) return v.map(bsonToJson);
  if (typeof v === 'object') {
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = bsonToJson(x);
    return out;
  }
  if (typeof v === 'bigint') return Number(v);
  return v as Json;
}

const decode = (v: Record<string, Json> | undefined): Document | undefined => (v === undefined ? undefined : (BSON.EJSON.deserialize(v, { relaxed: true }) as Document));

/** Run one request on a connected database. */
export async function runMongo(db: Db, req: MongoRequest): Promise<{ rows: Record<string, unknown>[]; value: unknown }> {
  switch (req.operation) {
    case 'listCollections': {
      const cols = await db.listCollections({}, { nameOnly: true }).toArray();
      const rows = cols.map((c) => ({ name: c.name }));
      return { rows, value: rows.map((r) => r.name) };
    }
    case 'listIndexes': {
      const ix = (await db.collection(req.collection).listIndexes().toArray()) as Document[];
      const rows = ix.map((d) => bsonToJson(d) as Record<string, unknown>);
      return { rows, value: rows };
    }
    case 'sample': {
      const docs = await db.collection(req.collection).find({}).limit(req.limit).toArray();
      const rows = docs.map((d) => bsonToJson(d) as Record<string, unknown>);
      return { rows, value: rows };
    }
    case 'schemaFields': {
      const info = (await db.listCollections({ name: req.collection }).toArray()) as Document[];
      const validator = (info[0]?.options as Document | undefined)?.validator as Document | undefined;
      const fields = schemaPaths(validator?.$jsonSchema);
      return { rows: fields.map((name) => ({ name })), value: fields };
    }
    default:
      break;
  }
  const op = req as MongoOp;
  const coll = db.collection(op.collection);
  const filter = decode(op.filter) ?? {};
  switch (op.operation) {
    case 'find': {
      let cur = coll.find(filter, { projection: decode(op.projection) });
      if (op.sort) cur = cur.sort(decode(op.sort) as never);
      const docs = await cur.limit(Math.min(op.limit ?? ROWS_CAP, ROWS_CAP)).toArray();
      const rows = docs.map((d) => bsonToJson(d) as Record<string, unknown>);
      return { rows, value: rows };
    }
    case 'findOne': {
      const doc = await coll.findOne(filter, { projection: decode(op.projection), sort: decode(op.sort) as never });
      const value = doc ? (bsonToJson(doc) as Record<string, unknown>) : null;
      return { rows: value ? [value] : [], value };
    }
    case 'countDocuments': {
      const n = await coll.countDocuments(filter, op.limit ? { limit: op.limit } : {});
      return { rows: [{ count: n }], value: n };
    }
    case 'aggregate': {
      const docs = await coll.aggregate((op.pipeline ?? []).map((s) => decode(s) as Document)).limit(ROWS_CAP).toArray();
      const rows = docs.map((d) => bsonToJson(d) as Record<string, unknown>);
      return { rows, value: rows };
    }
    case 'distinct': {
      const values = (await coll.distinct(op.field as string, filter)).map(bsonToJson);
      return { rows: values.map((value) => ({ value })), value: values };
    }
  }
}
