import { stepReference } from './json-chain';
import { TYPE_NAMES } from './json-ops';
import type { CanonicalStep, DialectContext, StepDialect } from './types';
import { copy, isObject, type Inputs } from './util';

/**
 * P06 json_schema_match: `required_fields` as canonical, plus `field_types` (type names mapped),
 * `root` (a JSONPath or dotted prefix → dotted `root`), `response` (the body to check, or the
 * latest response named by `{{step_N}}`/`{{from_P04}}`) and xayqujrv's `_check_response_header`
 * (an underscore key with a meaning: the header must be present → `required_headers`).
 */
export const P06Dialect: StepDialect = {
  types: ['P06', 'JSON_SCHEMA_MATCH'],
  normalize(type: string, raw: Inputs, ctx: DialectContext): CanonicalStep {
    const inputs = copy(raw);
    if ('response' in inputs) {
      const r = inputs.response;
      delete inputs.response;
      const ref = typeof r === 'string' ? stepReference(r, ctx) : undefined;
      if (ref?.ok) ctx.spelling(`response: "${ref.label}"`, '(the last response)', "the response of the step it names, which is the chain's latest");
      else if (ref) ctx.issue('inputs.response', ref.message);
      else {
        if ('body' in inputs) ctx.issue('inputs.response', 'response given beside body');
        inputs.body = r;
        ctx.spelling('response', 'body', 'the body to check, e.g. a response saved earlier');
      }
    }
    if ('field_types' in inputs) {
      const ft = inputs.field_types;
      if (!isObject(ft)) ctx.issue('inputs.field_types', 'field_types must be an object {field: type}');
      else {
        const out: Record<string, unknown> = {};
        for (const [f, t] of Object.entries(ft)) {
          const c = typeof t === 'string' ? TYPE_NAMES[t.toLowerCase()] : undefined;
          if (c === undefined) ctx.issue(`inputs.field_types.${f}`, `unknown type name ${JSON.stringify(t)}`);
          else out[f] = c;
        }
        inputs.field_types = out;
        ctx.spelling('field_types', 'field_types', 'each field is present with that JSON type');
      }
    }
    if ('root' in inputs) {
      const r = inputs.root;
      const dotted = typeof r === 'string' ? r.trim().replace(/^\$\.?/, '') : undefined;
      if (dotted === undefined || /[[\]*?]/.test(dotted)) ctx.issue('inputs.root', 'root must be a plain path such as "$.data"');
      else if (dotted === '') delete inputs.root;
      else {
        inputs.root = dotted;
        ctx.spelling('root: "$.<path>"', 'root: "<dotted path>"', 'the object the required fields are looked up in');
      }
    }
    if ('_check_response_header' in inputs) {
      const h = inputs._check_response_header;
      delete inputs._check_response_header;
      if (typeof h !== 'string' || !h) ctx.issue('inputs._check_response_header', 'a header name');
      else {
        inputs.required_headers = [...(Array.isArray(inputs.required_headers) ? inputs.required_headers : []), h];
        ctx.spelling('_check_response_header', 'required_headers', 'the response must carry this header');
      }
    }
    if ('required_keys_min_count' in inputs) {
      inputs.min_keys = inputs.required_keys_min_count;
      delete inputs.required_keys_min_count;
      if (!('required_fields' in inputs)) inputs.required_fields = [];
      ctx.spelling('required_keys_min_count', 'min_keys', 'the object has at least this many keys');
    }
    if (ctx.task === 'egsszeqg') {
      // this fork looked the fields up in the body's `data` member when there was one (and in a list's first element)
      inputs.unwrap = ['data'];
      ctx.spelling('required_fields (egsszeqg)', 'unwrap: ["data"]', 'fields are read inside the `data` wrapper when the body has one');
    }
    return { type, inputs };
  },
};
