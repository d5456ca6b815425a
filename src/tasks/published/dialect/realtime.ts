import type { DialectContext, StepDialect } from './types';
import { isObject, type Inputs } from './util';

/**
 * P21 means two things: a log check (the canonical P21: `log_path`/`pattern`) and, in jzssnoqp,
 * mjobbzsi, rjhcjrst and sgdoserd, a WebSocket connection (WEBSOCKET_CHECK). The inputs decide:
 * `url`/`path`/`subprotocol`/`send`/`steps`/`expect_*` are a socket, `log_path`/`pattern` a log.
 */
const WS_KEYS = ['url', 'path', 'expect_connected', 'subprotocol', 'protocol', 'subscribe', 'send', 'steps', 'expect_message', 'expect_event', 'expect_first_event', 'expect_response', 'trigger_after_connect', 'auth_via'];

export const realtimeDialect: StepDialect = {
  types: ['P21'],
  normalize(type, raw, ctx) {
    const i: Inputs = { ...raw };
    const ws = WS_KEYS.some((k) => k in i);
    const log = 'log_path' in i || 'pattern' in i;
    if (ws && log) ctx.issue('inputs', 'both WebSocket keys and log keys are given');
    if (!ws) return { type: 'P21', inputs: logCheck(i, ctx) };
    return { type: 'WEBSOCKET_CHECK', inputs: socket(i, ctx) };
  },
};

/** xayqujrv: an empty pattern and no log_path = keep the tail of the app container's output (evidence for P17). */
function logCheck(i: Inputs, ctx: DialectContext): Inputs {
  if (!('log_path' in i) && ctx.task === 'xayqujrv') {
    i.source = 'container_output';
    ctx.spelling('no log_path', 'source: container_output', 'the app container\'s stdout/stderr (docker logs), as task_xayqujrv\'s evaluator read it');
  }
  if (i.pattern === '') {
    delete i.pattern;
    ctx.spelling('pattern: ""', 'no pattern', 'nothing is searched: the log tail is kept as evidence (last_log_tail) and the step passes when the log could be read');
  }
  return i;
}

function take(i: Inputs, k: string): unknown {
  const v = i[k];
  delete i[k];
  return v;
}

function socket(i: Inputs, ctx: DialectContext): Inputs {
  const out: Inputs = {};
  const steps: Inputs[] = [];
  const url = 'url' in i ? take(i, 'url') : take(i, 'path');
  if ('path' in i) ctx.issue('inputs.path', 'url and path are both given');
  out.url = url;
  if (ctx.task === 'sgdoserd' && url !== undefined) ctx.spelling('path', 'url', 'the WebSocket path on the app');
  if ('expect_connected' in i) {
    const c = take(i, 'expect_connected');
    if (c === false) out.expect_refused = true;
    else if (c !== true) ctx.issue('inputs.expect_connected', 'must be true or false');
    ctx.spelling('expect_connected: false', 'expect_refused: true', 'the server refuses the connection');
    if (c === false) return { ...out, ...i };
  }
  const timeout = typeof i.timeout_ms === 'number' ? (take(i, 'timeout_ms') as number) : undefined;
  if ('subprotocol' in i) {
    const p = take(i, 'subprotocol');
    if (typeof p === 'string' && p) out.subprotocols = [p];
    ctx.spelling('subprotocol', 'subprotocols[]', 'the WebSocket subprotocol offered');
  }
  if ('protocol' in i) {
    const p = take(i, 'protocol');
    out.subprotocols = [p === 'action_cable' ? 'actioncable-v1-json' : p];
    ctx.spelling('protocol: action_cable', 'subprotocols: [actioncable-v1-json]', 'an ActionCable connection');
  }
  if ('auth_via' in i) {
    const a = take(i, 'auth_via');
    if (a !== 'session') ctx.issue('inputs.auth_via', `unknown auth_via ${JSON.stringify(a)} (known: session)`);
    out.session = 'chain';
    ctx.spelling('auth_via: session', 'session: chain', 'the upgrade request carries the chain role\'s credentials');
  }
  // sgdoserd: the first event (hello) comes before anything is sent
  if ('expect_first_event' in i) {
    const e = take(i, 'expect_first_event');
    steps.push({ expect: { json: isObject(e) ? e : {} }, first: true, ...(timeout ? { timeout_ms: timeout } : {}) });
    ctx.spelling('expect_first_event', 'steps[{expect: {json}, first: true}]', 'the first message after connecting is this event');
  }
  if ('subscribe' in i) {
    const sub = take(i, 'subscribe');
    steps.push({ send_json: { command: 'subscribe', identifier: JSON.stringify(sub) } });
    ctx.spelling('subscribe', 'steps[{send_json: {command: subscribe, identifier}}]', 'an ActionCable subscribe command for this channel identifier');
  }
  if ('send' in i) {
    const s = take(i, 'send');
    for (const m of Array.isArray(s) ? s : [s]) steps.push(typeof m === 'string' ? { send: m } : { send_json: m });
    ctx.spelling('send', 'steps[{send | send_json}]', 'frames sent after connecting (objects as JSON)');
  }
  if ('expect_response' in i) {
    const e = take(i, 'expect_response');
    steps.push({ expect: { json: isObject(e) ? e : {} }, ...(timeout ? { timeout_ms: timeout } : {}) });
    ctx.spelling('expect_response', 'steps[{expect: {json}}]', 'a reply with these fields arrives');
  }
  if ('expect_message' in i) {
    const e = take(i, 'expect_message');
    const m = isObject(e) && isObject(e.match) ? e.match : {};
    const matcher: Inputs = {};
    if (typeof m.content_contains === 'string') matcher.contains = m.content_contains;
    const rest = Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'content_contains'));
    if (Object.keys(rest).length) matcher.json = rest;
    const t = isObject(e) && typeof e.timeout_ms === 'number' ? e.timeout_ms : timeout;
    steps.push({ expect: matcher, ...(t ? { timeout_ms: t } : {}) });
    ctx.spelling('expect_message {timeout_ms, match: {content_contains | field: value}}', 'steps[{expect: {contains | json}, timeout_ms}]', 'a message containing the text (or with these JSON fields) arrives in time');
  }
  if ('steps' in i) {
    const list = take(i, 'steps');
    if (!Array.isArray(list)) ctx.issue('inputs.steps', 'must be a list');
    else for (const [n, s] of list.entries()) {
      if (!isObject(s)) {
        ctx.issue(`inputs.steps[${n}]`, 'a step is an object');
        continue;
      }
      const st: Inputs = { ...s };
      if ('send' in st) steps.push(typeof st.send === 'string' ? { send: take(st, 'send') } : { send_json: take(st, 'send') });
      if ('expect' in st || 'expect_any' in st) {
        const any = take(st, 'expect_any');
        const one = take(st, 'expect');
        steps.push({ expect: Array.isArray(any) ? { any_of: any } : { contains: one }, ...(timeout ? { timeout_ms: timeout } : {}) });
      }
      for (const k of Object.keys(st)) ctx.issue(`inputs.steps[${n}].${k}`, `unknown step key "${k}"`);
    }
    ctx.spelling('steps[{send, expect | expect_any}]', 'steps[{send}, {expect: {contains | any_of}}]', 'send a frame, then wait for a message containing the text (or one of the texts)');
  }
  if ('trigger_after_connect' in i) {
    const t = take(i, 'trigger_after_connect');
    const call = isObject(t) && isObject(t.http_call) ? t.http_call : undefined;
    if (!call) ctx.issue('inputs.trigger_after_connect', 'expected {http_call: {method, path, body}}');
    else steps.push({ http: { method: String(call.method ?? 'GET').toUpperCase(), path: call.path, ...(call.body !== undefined ? { body: call.body } : {}) } });
    ctx.spelling('trigger_after_connect.http_call', 'steps[{http}]', 'an HTTP request in the chain\'s session while the socket is open');
  }
  if ('expect_event' in i) {
    const e = take(i, 'expect_event');
    const ev = isObject(e) ? { ...e } : {};
    const matcher: Inputs = { json: {} as Inputs };
    if ('event' in ev) (matcher.json as Inputs).event = take(ev, 'event');
    if ('broadcast_channel_id' in ev) (matcher.json as Inputs).broadcast = { channel_id: take(ev, 'broadcast_channel_id') };
    if ('data_keys_required' in ev) {
      const keys = take(ev, 'data_keys_required');
      if (Array.isArray(keys) && keys.length) matcher.has_keys = keys.map((k) => `data.${String(k)}`);
    }
    for (const k of Object.keys(ev)) ctx.issue(`inputs.expect_event.${k}`, `unknown key "${k}"`);
    steps.push({ expect: matcher, ...(timeout ? { timeout_ms: timeout } : {}) });
    ctx.spelling('expect_event {event, broadcast_channel_id, data_keys_required}', 'steps[{expect: {json: {event, broadcast.channel_id}, has_keys: data.*}}]', 'an event of this kind, for this channel, with these data keys, arrives');
  }
  if (ctx.task === 'sgdoserd' && !steps.some((s) => 'expect' in s)) {
    // sgdoserd's evaluator passed such a step when any event arrived
    steps.push({ expect: {} });
    ctx.spelling('(no expectation)', 'steps[{expect: {}}]', 'some message arrives after connecting');
  }
  out.steps = steps;
  return { ...out, ...i };
}
