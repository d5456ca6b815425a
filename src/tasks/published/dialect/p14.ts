import { addHeader, flag, prepare, put, take } from './http-common';
import { authModeRole } from './p04';
import type { CanonicalStep, DialectContext, StepDialect } from './types';
import { rename, type Inputs } from './util';

const RESULTS: Record<string, string> = { allowed_or_denied: 'either', denied_or_allowed: 'either', not_denied: 'not_denied' };
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
/** "METHOD /path", optionally followed by a description: "(…)" (ychlukjm) or words (gavmyneb "POST /graphql hideAssignmentGrades") */
const HTTP_ACTION = /^\s*([A-Za-z]+)\s+((?:\/|\{\{)\S*)\s*(?:\((.*)\)|(\S.*?))?\s*$/;

/** P14 permission_check as the published DAGs spell it (each evaluator decided "allowed" its own way). */
export function normalizeP14(raw: Inputs, ctx: DialectContext): CanonicalStep {
  const i = prepare(raw, ctx);
  const t = ctx.task;
  if (t === 'mjobbzsi' && typeof i.action === 'string' && !HTTP_ACTION.test(i.action)) return uiCheck(raw, ctx);

  if (typeof i.action === 'string') {
    const m = HTTP_ACTION.exec(i.action);
    if (m && (m[3] ?? m[4]) !== undefined) {
      // ychlukjm "POST /api/graphql (addTag to entity where …)", gavmyneb "POST /graphql hideAssignmentGrades": the rest describes the case
      i.action = `${m[1]} ${m[2]}`;
      i._action_description = m[3] ?? m[4];
      ctx.spelling('action "METHOD /path (description)"', 'action + notes', 'the request, with a description of the situation it probes');
    }
  }
  const result = i.expected_result;
  if (typeof result === 'string' && result in RESULTS) {
    i.expected_result = RESULTS[result];
    ctx.spelling(`expected_result: ${result}`, `expected_result: ${RESULTS[result]}`, result === 'not_denied' ? 'any answer but a denial (or a server error)' : 'allowed or denied, not an error');
  }

  // who
  if ('auth_mode' in i) {
    const m = take(i, 'auth_mode');
    const role = authModeRole(m);
    if (role) put(i, 'role', role, ctx, 'auth_mode');
    else ctx.issue('inputs.auth_mode', 'must be null or a role name');
    ctx.spelling('auth_mode', 'role', 'the credentials the request carries (null: none); each mode is a role of the task');
  }
  if (typeof i.attach_csrf === 'boolean') {
    if (flag(take(i, 'attach_csrf'), ctx, 'attach_csrf')) i.attach_csrf = 'x-csrf-token';
    ctx.spelling('attach_csrf: true', 'attach_csrf: x-csrf-token', 'send the session\'s CSRF token');
  }
  if ('role_aro_group' in i) {
    // lgzivily: the ACL group is the role; username/password log in as that group's account
    put(i, 'role', take(i, 'role_aro_group'), ctx, 'role_aro_group');
    ctx.spelling('role_aro_group', 'role', 'the role (ACL group) the request is made as');
  }
  if ('username' in i || 'password' in i) {
    i.login_as = { username: take(i, 'username'), password: take(i, 'password') ?? '' };
    ctx.spelling('username + password', 'login_as', 'log in through the role\'s login with this account');
  }
  if ('token' in i && t !== 'gavmyneb') {
    const tok = take(i, 'token');
    const header = t === 'cqfnbfay' ? ['X-Auth-Token', String(tok)] : t === 'rjhcjrst' ? ['Authorization', `Bearer ${tok}`] : undefined;
    if (!header) ctx.issue('inputs.token', `no known meaning in task ${t}`);
    else {
      addHeader(i, header[0], header[1]);
      ctx.spelling(`token (${t})`, `headers.${header[0]}`, 'the token the request carries (the task\'s own API header)');
    }
  }
  rename(i, 'allow_redirects', 'follow_redirects', ctx, 'follow same-origin redirects');

  // which statuses count
  if ('acceptable_denied_status' in i) {
    put(i, 'denied_codes', asList(take(i, 'acceptable_denied_status')), ctx, 'acceptable_denied_status');
    ctx.spelling('acceptable_denied_status', 'denied_codes', 'the statuses that mean denied');
  }
  if (t === 'xayqujrv') {
    // its evaluator: denied = [401, 403, 404] unless acceptable_denied_status; expected_status only for allowed
    if (!('denied_codes' in i) && i.expected_result !== 'allowed') i.denied_codes = [401, 403, 404];
    if (i.expected_result !== 'allowed' && 'expected_status' in i) {
      i._expected_status_unread = take(i, 'expected_status');
      ctx.spelling('expected_status with a non-allowed result (xayqujrv)', 'notes', 'the evaluator compared expected_status only for allowed');
    }
  }
  if (t === 'cqfnbfay' && i.expected_result === 'denied') {
    // its evaluator: denied = 401, 403, 404 or the expected_status
    i.acceptable_statuses = [...new Set([401, 403, 404, ...(asList(take(i, 'expected_status')) as number[])])];
    ctx.spelling('expected_status with denied (cqfnbfay)', 'acceptable_statuses', 'a denial is 401, 403, 404 or the expected status');
  }
  if (t === 'lgzivily' && 'expected_status' in i) {
    // its evaluator: the status must be one of expected_status (plus 401/403/404 for denied)
    const set = asList(take(i, 'expected_status')) as number[];
    i.acceptable_statuses = [...new Set([...set, ...(i.expected_result === 'denied' ? [401, 403, 404] : [])])];
    ctx.spelling('expected_status (lgzivily)', 'acceptable_statuses', 'the statuses that count as the expected outcome');
  }
  if (t === 'ychlukjm' && i.expected_result === 'denied' && asList(i.expected_status).some((s) => typeof s === 'number' && s < 400)) {
    // GraphQL answers a refused mutation with 200 and an error: the DAG lists the statuses it accepts
    i.acceptable_statuses = asList(take(i, 'expected_status'));
    ctx.spelling('expected_status with a 2xx for denied (ychlukjm)', 'acceptable_statuses', 'the statuses the DAG accepts as the denial');
  }
  if (t === 'hhrdixum' && 'expected_statuses' in i) {
    // its evaluator: denied = 403/404, the expected_status when it is 400/403/404, or one of expected_statuses;
    // allowed = the expected_status (else a 2xx) or one of expected_statuses
    const extra = asList(take(i, 'expected_statuses')) as number[];
    const st = asList(take(i, 'expected_status')) as number[];
    const base = i.expected_result === 'denied' ? [403, 404, ...st.filter((s) => [400, 403, 404].includes(s))] : st.length ? st : [200, 201, 202, 203, 204, 205, 206];
    i.acceptable_statuses = [...new Set([...base, ...extra])];
    ctx.spelling('expected_statuses (hhrdixum)', 'acceptable_statuses', 'more statuses that count as the expected outcome');
  }
  if (t === 'sgdoserd') sgdoserd(i, ctx);
  if (t === 'gavmyneb') gavmyneb(i, ctx);
  if (t === 'iyjruvfz') iyjruvfz(i, ctx);
  if (t === 'ididetxj' && typeof i.action === 'string' && !HTTP_ACTION.test(i.action)) {
    // ididetxj: the P04 before it made the request; `action` names the case ("documents.archive", "rbac")
    i._action_label = take(i, 'action');
    i.from_last_response = true;
    ctx.spelling('action: "<label>" (ididetxj)', 'from_last_response: true', 'judge the answer of the request the chain just made');
  }
  return { type: 'P14', inputs: i };
}

/**
 * gavmyneb's P14: `operation` + `path` spell the action; expect_status is expected_status; the
 * default result is allowed. Denied = acceptable_statuses or 401/403/404 (expected_status not
 * read); allowed = acceptable_statuses, else expected_status, else 200/201/202/204. `token: null`
 * sends no credentials; a token string was not read (the role's own token was sent).
 */
function gavmyneb(i: Inputs, ctx: DialectContext): void {
  if ('operation' in i) {
    i.method = take(i, 'operation');
    ctx.spelling('operation + path', 'method + path', 'the request');
  }
  rename(i, 'expect_status', 'expected_status', ctx, 'the status the answer must have');
  if (!('expected_result' in i)) i.expected_result = 'allowed';
  if ('token' in i) {
    const tok = take(i, 'token');
    if (tok === null) i.role = 'anonymous';
    else i._token_unread_by_evaluator = tok;
    ctx.spelling('token (gavmyneb)', 'role anonymous (null) / notes', 'null: no credentials; a token string was not read (the role\'s own token is sent)');
  }
  const st = take(i, 'expected_status');
  if (i.expected_result === 'denied') {
    if (!('acceptable_statuses' in i)) i.denied_codes = [401, 403, 404];
    if (st !== undefined) i._expected_status_unread = st;
  } else if (!('acceptable_statuses' in i)) i.acceptable_statuses = st !== undefined ? asList(st) : [200, 201, 202, 204];
  else if (st !== undefined) i._expected_status_unread = st;
}

/**
 * iyjruvfz's P14: expected_acceptable_statuses decide (denied default 401/403/404; allowed default
 * 200/201/204 plus expected_status); `as_role_id` was not read (the request goes as the current role).
 */
function iyjruvfz(i: Inputs, ctx: DialectContext): void {
  const acc = take(i, 'expected_acceptable_statuses');
  const st = take(i, 'expected_status');
  const denied = i.expected_result !== 'allowed';
  const set = (acc !== undefined ? asList(acc) : denied ? [401, 403, 404] : [200, 201, 204]) as number[];
  i.acceptable_statuses = [...new Set(denied ? set : [...set, ...(asList(st) as number[])])];
  if (denied && st !== undefined) i._expected_status_unread = st;
  if ('as_role_id' in i) i._as_role_id_unread = take(i, 'as_role_id');
  if (!('expected_result' in i)) i.expected_result = 'denied';
  ctx.spelling('expected_acceptable_statuses (iyjruvfz)', 'acceptable_statuses', 'the statuses that count as the expected outcome');
}

/**
 * sgdoserd's P14 sends nothing: it judges the answer of the P04 before it (always the same action)
 * — allowed (the default) is 2xx or the expected_status; denied is the expected_status or 404, else
 * 401/403/404; not_denied is anything but 401/403.
 */
function sgdoserd(i: Inputs, ctx: DialectContext): void {
  i.from_last_response = true;
  ctx.spelling('P14 (sgdoserd)', 'from_last_response: true', 'judge the answer of the request the chain just made');
  if (!('expected_result' in i)) {
    i.expected_result = 'allowed';
    ctx.spelling('expected_result absent (sgdoserd)', 'expected_result: allowed', 'the evaluator\'s default');
  }
  const st = take(i, 'expected_status');
  if (i.expected_result === 'denied') {
    if (st !== undefined) i.acceptable_statuses = [...new Set([...(asList(st) as number[]), 404])];
    else i.denied_codes = [401, 403, 404];
  } else if (i.expected_result === 'not_denied') i.denied_codes = [401, 403];
  else if (st !== undefined) i.acceptable_statuses = asList(st);
  else i.acceptable_statuses = Array.from({ length: 100 }, (_, k) => 200 + k);
}

/**
 * mjobbzsi's P14 is not an HTTP check: `action: "kickParticipant"`, `context: "conference_muc"`
 * ask whether a conference participant's UI offers a moderator control. Its evaluator drove a
 * browser and counted a browser failure, and a visible control for "denied", as a pass; saasbench
 * has no conference client to observe the control, so the step runs and fails (PUBLISHED_STUB).
 */
function uiCheck(raw: Inputs, ctx: DialectContext): CanonicalStep {
  ctx.spelling('action: "<UI control>" + context (mjobbzsi)', 'PUBLISHED_STUB', 'a conference-UI permission check saasbench cannot observe');
  const inputs: Inputs = {};
  const notes: Inputs = {};
  for (const [k, v] of Object.entries(raw)) (k.startsWith('_') ? notes : inputs)[k] = v;
  return {
    type: 'PUBLISHED_STUB',
    inputs: { published_type: 'P14', reason: 'mjobbzsi\'s P14 checks a conference-UI control (browser, several participants) that saasbench cannot observe; its evaluator passed it even when the browser failed', published_inputs: inputs, ...notes },
  };
}

export const P14_DIALECT: StepDialect = {
  types: ['P14', 'PERMISSION_CHECK'],
  normalize: (_type, inputs, ctx) => normalizeP14(inputs, ctx),
};
