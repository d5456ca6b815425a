import { prepare, take } from './http-common';
import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `http://host.docker.internal:{{webhook_port}}` in a registration: the app is told the receiver's address. */
const HOST_RECEIVER = /http:\/\/host\.docker\.internal:\{\{\s*webhook_port\s*\}\}/g;

/** A request object {method, path, body, headers, token} → P27's flat trigger or its register object. */
function request(r: unknown, ctx: DialectContext, at: string): Inputs | undefined {
  if (!isObject(r)) {
    ctx.issue(`inputs.${at}`, 'must be a request object {method, path, body, headers}');
    return undefined;
  }
  const out: Inputs = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === 'method' || k === 'path' || k === 'body' || k === 'headers') out[k] = v;
    else if (k === 'token') {
      // xayqujrv (Django REST framework): the admin token as "Authorization: Token …"
      out.headers = { Authorization: `Token ${String(v)}`, ...(isObject(out.headers) ? out.headers : {}) };
      ctx.spelling(`${at}.token (xayqujrv)`, `${at}.headers.Authorization: Token …`, 'the API token the request carries');
    } else if (k === 'type' && v === 'http') continue;
    else ctx.issue(`inputs.${at}.${k}`, `unknown key "${k}"`);
  }
  return out;
}

/** Rewrite the receiver address the published DAGs spelled out into P27's {webhook_base} token. */
function receiverAddress(v: unknown, ctx: DialectContext): unknown {
  const s = JSON.stringify(v);
  if (!s.includes('host.docker.internal')) return v;
  ctx.spelling('http://host.docker.internal:{{webhook_port}}', '{webhook_base}', 'the address of the step\'s own webhook receiver');
  const out = s.replace(HOST_RECEIVER, '{webhook_base}');
  if (out.includes('host.docker.internal')) ctx.issue('inputs', 'a host.docker.internal address other than :{{webhook_port}}');
  return JSON.parse(out);
}

/** P27 webhook_delivery as the published DAGs spell it (trigger / register / expect_delivery objects). */
export function normalizeP27(raw: Inputs, ctx: DialectContext): Inputs {
  const i = prepare(raw, ctx);
  const t = ctx.task;
  if (t === 'iyjruvfz') return iyjruvfz(i, ctx);
  if (!('trigger' in i) && !('expect_delivery' in i)) return i;
  const out: Inputs = {};
  const trig = request(take(i, 'trigger'), ctx, 'trigger');
  if (trig) {
    out.trigger_method = trig.method ?? 'POST';
    out.trigger_path = trig.path;
    if (trig.body !== undefined) out.trigger_body = receiverAddress(trig.body, ctx);
    if (trig.headers !== undefined) out.trigger_headers = trig.headers;
    ctx.spelling('trigger {method, path, body}', 'trigger_method/trigger_path/trigger_body', 'the request that makes the app send the webhook');
  }
  if ('register' in i) {
    const reg = request(take(i, 'register'), ctx, 'register');
    if (reg) out.register = receiverAddress(reg, ctx);
  }
  const qp = take(i, 'queue_processing');
  if (qp !== undefined) {
    const q = isObject(qp) ? qp : {};
    // rjhcjrst: the container is the app's ({{app_container}}); the command drains the app's webhook queue
    if (typeof q.command !== 'string' || (q.container !== undefined && q.container !== '{{app_container}}')) ctx.issue('inputs.queue_processing', 'must be {command, container: "{{app_container}}"}');
    else out.run_after_trigger = { command: q.command };
    ctx.spelling('queue_processing {command, container}', 'run_after_trigger {command}', 'a command in the app container that processes the queue sending the webhook');
  }
  const rawExp = take(i, 'expect_delivery');
  const exp: Inputs = isObject(rawExp) ? rawExp : {};
  if (rawExp !== undefined && !isObject(rawExp)) ctx.issue('inputs.expect_delivery', 'must be an object');
  const crit: Inputs = {};
  const wait = take(exp, 'timeout_ms');
  out.wait_seconds = typeof wait === 'number' ? wait / 1000 : 15;
  const bodyContains = take(exp, 'body_contains');
  if (isObject(bodyContains)) {
    // both evaluators looked for each value as text of the raw body (the keys only name them)
    crit.body_contains = Object.values(bodyContains).map(String);
    ctx.spelling('expect_delivery.body_contains {key: value}', 'receiver.body_contains [values]', 'texts the delivered body contains');
  }
  const headers = take(exp, 'headers_contain');
  if (isObject(headers)) {
    // cqfnbfay compared a substring, rjhcjrst a regex (its values are anchored patterns)
    crit.headers_match = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, t === 'cqfnbfay' ? escapeRe(String(v)) : String(v)]));
    ctx.spelling('expect_delivery.headers_contain', 'receiver.headers_match', t === 'cqfnbfay' ? 'header values containing these texts' : 'header values matching these patterns');
  }
  const jp = take(exp, 'body_jsonpath_exists');
  if (jp !== undefined) {
    crit.body_json_paths = jp;
    ctx.spelling('expect_delivery.body_jsonpath_exists', 'receiver.body_json_paths', 'JSON values the delivered body has');
  }
  const sig = take(exp, 'signature_verify');
  if (sig !== undefined) crit.signature = signature(sig, headers, ctx);
  const attempts = take(exp, 'min_attempts');
  for (const k of Object.keys(exp)) ctx.issue(`inputs.expect_delivery.${k}`, `unknown key "${k}"`);

  if (t === 'xayqujrv') {
    // the app delivers to the stack's mock-receiver service; its /history is the record (host port 9011)
    const min = take(i, 'expect_min_events') ?? take(i, 'min_events');
    take(i, 'min_events');
    const re = take(i, 'expect_signature_regex');
    const req = take(i, 'require_signature');
    crit.min_deliveries = typeof min === 'number' ? min : 1;
    if (attempts !== undefined) i._min_attempts_superseded_by_expect_min_events = attempts;
    if (typeof re === 'string' && re && req !== false) crit.headers_match = { ...(crit.headers_match as object), 'X-Webhook-Signature': re };
    out.receiver_history = { url: 'http://localhost:9011/history?since=0', criteria: crit };
    ctx.spelling('expect_min_events / min_events / expect_signature_regex / require_signature (xayqujrv)', 'receiver_history.criteria', 'how many deliveries the mock receiver must have recorded, and their signature');
  } else {
    if (attempts !== undefined) crit.min_deliveries = attempts;
    // cqfnbfay's app was told `host.docker.internal:{{webhook_port}}` by an earlier step: listen there
    if (t === 'cqfnbfay') crit.port = '{{webhook_port}}';
    out.receiver = crit;
  }
  for (const [k, v] of Object.entries(i)) if (!(k in out)) out[k] = v;
  return out;
}

function signature(sig: unknown, headers: unknown, ctx: DialectContext): Inputs | undefined {
  const s = isObject(sig) ? sig : {};
  const names = isObject(headers) ? Object.keys(headers) : [];
  if (typeof s.header_pattern !== 'string' || typeof s.secret !== 'string' || typeof s.algorithm !== 'string' || names.length !== 1) {
    ctx.issue('inputs.expect_delivery.signature_verify', 'needs algorithm, secret, header_pattern and exactly one header in headers_contain');
    return undefined;
  }
  ctx.spelling('expect_delivery.signature_verify', 'receiver.signature', 'an HMAC signature of the delivered body that must verify');
  return {
    header: names[0],
    // Python's named groups (?P<ts>…) are (?<ts>…) in JavaScript
    pattern: s.header_pattern.replace(/\(\?P</g, '(?<'),
    algorithm: s.algorithm,
    secret: s.secret,
    preimage: typeof s.preimage_template === 'string' ? s.preimage_template : '{raw_payload}',
  };
}

/** Days after 2027-02-01 for this node's booking (the evaluator moved each booking to a new slot). */
const slot = (at: string) => Number(/nodes\[(\d+)\]/.exec(at)?.[1] ?? 0);

/**
 * iyjruvfz's P27 was a whole scenario: register a webhook for `trigger_event` at `subscriber_url`
 * (a mock-receiver service of the stack) through the app's v2 API as the current role, book a slot
 * (which fires BOOKING_CREATED), then read the mock receiver's history (host port 9012): a delivery
 * at that path must arrive within wait_seconds (8) whose header matches the format (or equals
 * expected_header_value), at most expected_max_retries + 1 of them.
 * `verify_signature_locally` computed an HMAC of the step's own body: nothing of the app (a stub).
 */
function iyjruvfz(i: Inputs, ctx: DialectContext): Inputs {
  if (i.verify_signature_locally === true) {
    ctx.spelling('verify_signature_locally (iyjruvfz)', 'PUBLISHED_STUB', 'an HMAC of the DAG\'s own body, computed by the evaluator: nothing of the application');
    return { __stub: true, published_type: 'P27', reason: 'iyjruvfz\'s P27 verify_signature_locally hashes the step\'s own body inside the evaluator; it observes nothing of the application', _published_inputs: i };
  }
  const sub = typeof i.subscriber_url === 'string' ? i.subscriber_url : 'http://host.docker.internal:9012/hook';
  const path = (() => {
    try {
      return new URL(sub).pathname || '/hook';
    } catch {
      ctx.issue('inputs.subscriber_url', 'must be a URL');
      return '/hook';
    }
  })();
  const v2 = { 'Api-Version': '2024-08-13', 'Content-Type': 'application/json', Accept: 'application/json' };
  const header = typeof i.expected_header_name === 'string' ? i.expected_header_name : 'X-App-Signature-256';
  const crit: Inputs = { path, min_deliveries: 1 };
  if (i.expected_header_value !== undefined) crit.headers_match = { [header]: `^${escapeRe(String(i.expected_header_value))}$` };
  else crit.headers_match = { [header]: typeof i.expected_signature_format === 'string' ? i.expected_signature_format : '^[a-f0-9]{64}$' };
  if (typeof i.expected_max_retries === 'number') crit.max_deliveries = i.expected_max_retries + 1;
  const start = new Date(Date.UTC(2027, 1, 1, 10) + slot(ctx.at) * 86_400_000).toISOString().replace('.000', '');
  const out: Inputs = {
    register: { method: 'POST', path: '/api/v2/webhooks', headers: v2, body: { subscriberUrl: sub, triggers: [i.trigger_event ?? 'BOOKING_CREATED'], secret: i.secret ?? 'test-webhook-secret-32chars-AAAAA', active: true }, expected_status: [200, 201, 409] },
    trigger_method: 'POST',
    trigger_path: '/api/v2/bookings',
    trigger_headers: v2,
    trigger_body: { start, eventTypeId: '{{EVENT_TYPE_ID}}', attendee: { name: 'WebhookTester', email: `wh+${slot(ctx.at)}@x.com`, timeZone: 'UTC' } },
    receiver_history: { url: 'http://localhost:9012/history', criteria: crit },
    wait_seconds: typeof i.wait_seconds === 'number' ? i.wait_seconds : 8,
  };
  // expected_signature_algorithm names what the format checks; expected_timeout_at_seconds was not read (the delivery's arrival is checked)
  for (const k of ['expected_signature_algorithm', 'expected_timeout_at_seconds']) if (k in i) out[`_${k}`] = i[k];
  for (const [k, v] of Object.entries(i)) if (k.startsWith('_')) out[k] = v;
  const known = ['subscriber_url', 'secret', 'trigger_event', 'expected_header_name', 'expected_signature_format', 'expected_header_value', 'expected_max_retries', 'wait_seconds', 'expected_signature_algorithm', 'expected_timeout_at_seconds'];
  for (const k of Object.keys(i)) if (!known.includes(k) && !k.startsWith('_')) ctx.issue(`inputs.${k}`, `unknown key "${k}"`);
  ctx.spelling('P27 subscriber_url/trigger_event/expected_* (iyjruvfz)', 'register + trigger + receiver_history', 'register a webhook, book a slot, and check the mock receiver\'s record');
  return out;
}

export const P27_DIALECT: StepDialect = {
  types: ['P27', 'WEBHOOK_DELIVERY'],
  normalize: (_type, inputs, ctx) => {
    const out = normalizeP27(inputs, ctx);
    if (out.__stub) {
      delete out.__stub;
      return { type: 'PUBLISHED_STUB', inputs: out };
    }
    return { type: 'P27', inputs: out };
  },
};
