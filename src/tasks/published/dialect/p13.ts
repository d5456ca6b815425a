import type { CanonicalStep, DialectContext, StepDialect } from './types';
import { copy, isObject, rename, type Inputs } from './util';

/**
 * P13 auth_login as the published DAGs spell it. The same `method` value means different things
 * per task (each task had its own evaluator), so most values map onto a credential kind the
 * role declares in the benchmark pack — login, api_key or basic — and a few tasks map them
 * differently (TASK_METHODS, from each task's evaluator/primitives.py). Inline login details
 * (`login_path`, `username_field`, `token_endpoint`, …) become the canonical inline `login`;
 * inline credentials (`credentials`, `username`/`password`, `login_id`) the canonical
 * `credentials`; `expect_failure` a login that must be refused. Facts per task:
 * benchmarks/saasbench/README.md and docs/compatibility.md#auth.
 */

/** published method → canonical method (values already canonical are not listed). */
const METHODS: Record<string, { to: string; meaning: string }> = {
  api_login: { to: 'login', meaning: 'an HTTP login returning a token' },
  api_key_var: { to: 'api_key', meaning: 'the role\'s API key (the published evaluator provisioned one and kept it in <ROLE>_API_KEY)' },
  basic_auth: { to: 'basic', meaning: 'HTTP Basic with the role\'s username and password' },
  bearer_jwt: { to: 'login', meaning: 'an HTTP login returning a JWT sent as Bearer' },
  credentials: { to: 'login', meaning: 'an HTTP login with the user\'s credentials' },
  devise_token_auth: { to: 'login', meaning: 'a DeviseTokenAuth sign-in (access-token/client/uid headers)' },
  form: { to: 'login', meaning: 'a form-encoded login setting a session cookie' },
  form_session: { to: 'login', meaning: 'a form-encoded login setting a session cookie' },
  graphql_mutation: { to: 'login', meaning: 'a GraphQL sign-in mutation returning a token' },
  oauth2_password_or_session: { to: 'login', meaning: 'the role\'s login (OAuth2 password grant)' },
  password_grant: { to: 'login', meaning: 'an OAuth2 password-grant token request' },
  password_login: { to: 'login', meaning: 'an HTTP password login returning a token' },
};

/** Tasks whose evaluator read a method differently from the table above. */
const TASK_METHODS: Record<string, Record<string, { to: string; meaning: string }>> = {
  gmdnohlg: { bearer: { to: 'basic', meaning: 'gmdnohlg\'s evaluator sent HTTP Basic (with OCS-APIRequest) for "bearer", no login' } },
  pkvwdnhj: { basic_auth: { to: 'api_key', meaning: 'pkvwdnhj\'s evaluator sent the API user\'s token as HTTP Basic (the role\'s api_key/seed)' } },
  qmjfeopc: { api_key: { to: 'login', meaning: 'qmjfeopc\'s x-api-user/x-api-key come from the app\'s login (user id + API token)' } },
  rjhcjrst: { api_token: { to: 'login', meaning: 'rjhcjrst\'s evaluator obtained a Passport token by the password grant' } },
  xayqujrv: { api_token: { to: 'login', meaning: 'xayqujrv\'s evaluator obtained a DRF token by logging in' } },
  ychlukjm: { api_token: { to: 'login', meaning: 'ychlukjm\'s evaluator obtained the token from POST /logIn' } },
  lzdugafl: { api_token: { to: 'login', meaning: 'lzdugafl\'s evaluator obtained the token from an HTTP token endpoint' } },
  gavmyneb: { api_token: { to: 'login', meaning: 'gavmyneb: the role\'s login session (our reading; the published P13 code was not read)' } },
};

/** Tasks whose evaluator never read the inline credentials (the role's configured account logged in). */
const IGNORED_INLINE_CREDENTIALS: Record<string, string> = {
  iyjruvfz: 'iyjruvfz\'s evaluator logged in with the role\'s configured account and read the step\'s email/password only for a login that must fail',
  rjhcjrst: 'rjhcjrst\'s evaluator took every role\'s account from its RBAC_USERS table and never read the step\'s username/password (three admin nodes pair admin\'s email with the RBAC password)',
};

/** Tasks whose evaluator left the token in `<role>_token` (read later as {{<role>_token}}). */
const TOKEN_VARS: Record<string, (role: string, method: unknown) => string[] | undefined> = {
  rjhcjrst: (role) => (role === 'admin' ? ['admin_token', 'admin_pat'] : [`${role}_token`]),
  sgdoserd: (role) => [`${role}_token`],
  ubsmhopy: (role) => [`${role}_token`],
  // iyjruvfz kept a provisioned API key in <ROLE>_API_KEY (read as ${ADMIN_API_KEY} …)
  iyjruvfz: (role, method) => (method === 'api_key' ? [`${role.toUpperCase()}_API_KEY`] : undefined),
};

/** An identifier-like `{{x_username}}` / `{{x_email}}` names the role x. */
function roleFromPlaceholder(v: unknown): string | undefined {
  const m = typeof v === 'string' ? /^\{\{\s*(?:eval_)?([a-z0-9]+(?:_[a-z0-9]+)*?)_(?:username|email|login)\s*\}\}$/.exec(v) : null;
  return m?.[1];
}

function mapCredentials(inputs: Inputs, ctx: DialectContext): void {
  const creds: Record<string, unknown> = {};
  if ('credentials' in inputs) {
    const c = inputs.credentials;
    delete inputs.credentials;
    if (!isObject(c)) {
      ctx.issue('inputs.credentials', 'credentials must be an object {email|username|user|login, password}');
      return;
    }
    for (const [k, v] of Object.entries(c)) {
      if (['email', 'username', 'user', 'login'].includes(k)) {
        if ('username' in creds) ctx.issue(`inputs.credentials.${k}`, 'credentials name the user twice');
        creds.username = v;
        ctx.spelling(`credentials.${k}`, 'credentials.username', 'the account this login uses');
      } else if (k === 'password') creds.password = v;
      else ctx.issue(`inputs.credentials.${k}`, `unknown credentials field "${k}" (known: email, username, user, login, password)`);
    }
  }
  for (const [k, to] of [['username', 'username'], ['login_id', 'username'], ['password', 'password']] as const) {
    if (!(k in inputs)) continue;
    if (to in creds && creds[to] !== inputs[k]) ctx.issue(`inputs.${k}`, `${k} disagrees with credentials.${to}`);
    creds[to] = inputs[k];
    delete inputs[k];
    ctx.spelling(k, `credentials.${to}`, 'the account this login uses');
  }
  if (!Object.keys(creds).length) return;
  const ignored = IGNORED_INLINE_CREDENTIALS[ctx.task];
  if (ignored && !(ctx.task === 'iyjruvfz' && inputs.expect === 'refused')) {
    inputs._inline_credentials = creds;
    ctx.spelling('username/password (rjhcjrst)', 'notes', ignored);
    return;
  }
  inputs.credentials = creds;
}

function mapLogin(inputs: Inputs, ctx: DialectContext): void {
  const login: Record<string, unknown> = {};
  const take = (k: string) => {
    const v = inputs[k];
    delete inputs[k];
    return v;
  };
  for (const k of ['login_path', 'token_endpoint', 'token_path']) {
    if (!(k in inputs)) continue;
    const v = take(k);
    if (login.path !== undefined && login.path !== v) ctx.issue(`inputs.${k}`, `${k} disagrees with another login path (${JSON.stringify(login.path)})`);
    login.path = v;
    ctx.spelling(k, 'login.path', 'where this login is sent');
  }
  if ('client_id' in inputs) {
    const clientId = take('client_id');
    login.format = 'form';
    login.body = { grant_type: 'password', client_id: clientId, username: '{{username}}', password: '{{password}}' };
    login.token = { from: 'body', path: '$.access_token' };
    ctx.spelling('client_id', 'login.body.client_id', 'the OAuth2 client of a password-grant login (form body grant_type=password, token from $.access_token)');
  }
  if ('login_content_type' in inputs) {
    const ct = take('login_content_type');
    if (ct === 'application/x-www-form-urlencoded') login.format = 'form';
    else if (ct === 'application/json') login.format = 'json';
    else ctx.issue('inputs.login_content_type', `unsupported login content type ${JSON.stringify(ct)} (application/x-www-form-urlencoded or application/json)`);
    ctx.spelling('login_content_type', 'login.format', 'how the login body is encoded');
  }
  if ('username_field' in inputs || 'password_field' in inputs) {
    const uf = take('username_field') ?? 'username';
    const pf = take('password_field') ?? 'password';
    if (typeof uf !== 'string' || typeof pf !== 'string') ctx.issue('inputs.username_field', 'username_field and password_field are field names');
    else login.body = { [uf]: '{{username}}', [pf]: '{{password}}' };
    ctx.spelling('username_field/password_field', 'login.body', 'the login body\'s field names');
  }
  if ('session_cookie' in inputs) {
    const name = take('session_cookie');
    if (typeof name !== 'string' || !name) ctx.issue('inputs.session_cookie', 'session_cookie is a cookie name');
    else login.capture = { session_cookie: { from: 'cookie', name } };
    ctx.spelling('session_cookie', 'login.capture', 'the login must set this session cookie');
  }
  if (Object.keys(login).length) inputs.login = login;
}

/** Shell-style `${NAME}` / `${NAME:-default}` (the published harness's environment) → `{{NAME}}`, provided by the pack. */
const SHELL_VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g;
function shellVars(v: unknown, ctx: DialectContext): unknown {
  if (typeof v === 'string' && SHELL_VAR.test(v)) {
    ctx.spelling('${NAME} / ${NAME:-default}', '{{NAME}}', 'a value of the published harness\'s environment, provided by the benchmark pack');
    return v.replace(SHELL_VAR, (_m, name: string) => `{{${name}}}`);
  }
  if (Array.isArray(v)) return v.map((x) => shellVars(x, ctx));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shellVars(x, ctx)]));
  return v;
}

/** Tasks whose evaluator defaulted a missing role (no role and no {{<role>_username}}). */
const DEFAULT_ROLE: Record<string, string> = { iyjruvfz: 'admin', gavmyneb: 'admin' };

/** Inputs a task's evaluator did not read on P13 (they describe the account the pack declares). */
const DESCRIPTIVE_KEYS: Record<string, Record<string, string>> = {
  gavmyneb: {
    course_id: 'the course the role acts in (not a credential; the published P13 code was not read)',
  },
  iyjruvfz: {
    prefix: 'the API-key prefix (the published P13 read API_KEY_PREFIX from its environment; the role\'s declared key carries it)',
    membership_role: 'the account\'s team membership role (declared with the account in the pack)',
    user_permission_role: 'the account\'s global permission role (declared with the account in the pack)',
    user_id: 'the account\'s id (not read by the published P13)',
  },
};

export const P13_DIALECT: StepDialect = {
  types: ['P13', 'AUTH_LOGIN'],
  normalize(type: string, raw: Inputs, ctx: DialectContext): CanonicalStep {
    const inputs = shellVars(copy(raw), ctx) as Inputs;
    if ('expect_failure' in inputs) {
      const v = inputs.expect_failure;
      delete inputs.expect_failure;
      if (typeof v !== 'boolean') ctx.issue('inputs.expect_failure', 'expect_failure is true or false');
      else inputs.expect = v ? 'refused' : 'success';
      ctx.spelling('expect_failure', 'expect: refused', 'the application must refuse this login');
    }
    for (const [k, meaning] of Object.entries(DESCRIPTIVE_KEYS[ctx.task] ?? {})) {
      if (!(k in inputs)) continue;
      inputs[`_${k}`] = inputs[k];
      delete inputs[k];
      ctx.spelling(`${k} (${ctx.task})`, 'notes', meaning);
    }
    for (const [from, expect] of [['expected_failure', 'refused'], ['expected_session', 'success']] as const) {
      if (!(from in inputs)) continue;
      const v = inputs[from];
      delete inputs[from];
      if (typeof v !== 'boolean') ctx.issue(`inputs.${from}`, `${from} is true or false`);
      else inputs.expect = v === (expect === 'refused') ? 'refused' : 'success';
      ctx.spelling(from, `expect: ${expect}`, expect === 'refused' ? 'the application must refuse this login' : 'the login must open a session');
    }
    if ('email' in inputs) rename(inputs, 'email', 'username', ctx, 'the account this login uses', 'inputs', 'email', 'credentials.username');
    if ('store_as' in inputs) {
      if ('role' in inputs && inputs.role !== inputs.store_as) ctx.issue('inputs.store_as', 'store_as and role disagree');
      rename(inputs, 'store_as', 'role', ctx, 'the role the login\'s session is stored under (later steps act as it)');
    }
    // method: a credential kind of the role
    if (typeof inputs.method === 'string') {
      const m = inputs.method.toLowerCase();
      const map = TASK_METHODS[ctx.task]?.[m] ?? METHODS[m];
      if (map) {
        inputs.method = map.to;
        ctx.spelling(`method: ${m}`, `method: ${map.to}`, map.meaning);
      }
    }
    if ('prefer_master' in inputs) {
      const v = inputs.prefer_master;
      delete inputs.prefer_master;
      if (typeof v !== 'boolean') ctx.issue('inputs.prefer_master', 'prefer_master is true or false');
      else if (v) inputs.method = 'api_key';
      ctx.spelling('prefer_master: true', 'method: api_key', 'the organisation\'s master API key instead of the user\'s token');
    }
    mapCredentials(inputs, ctx);
    if (isObject(inputs._inline_credentials) && inputs.expect === 'refused') {
      inputs.credentials = inputs._inline_credentials;
      delete inputs._inline_credentials;
    }
    mapLogin(inputs, ctx);
    if (!('role' in inputs)) {
      const role = roleFromPlaceholder(isObject(inputs.credentials) ? inputs.credentials.username : undefined) ?? DEFAULT_ROLE[ctx.task];
      if (role) {
        inputs.role = role;
        ctx.spelling('(no role) {{<role>_username}}', 'role', 'a step without role logs in as the role its username placeholder names');
      } else ctx.issue('inputs.role', 'P13 without a role, and no {{<role>_username}} credentials to name one');
    }
    if (inputs.method === 'login' && ctx.task === 'lgzivily' && isObject(inputs.login) && raw.method === 'form_session') {
      // lgzivily's form_session is the OpenEMR login page, a login of its own beside the role's OAuth2 one
      inputs.role = `${String(inputs.role)}.form`;
      ctx.spelling('method: form_session (lgzivily)', 'role: <role>.form', 'the OpenEMR login form (authUser/clearPass), declared as its own role in the pack');
    }
    if ('session_required' in inputs) {
      const v = inputs.session_required;
      delete inputs.session_required;
      if (typeof v !== 'boolean') ctx.issue('inputs.session_required', 'session_required is true or false');
      else if (v) inputs.role = `${String(inputs.role)}.session`;
      ctx.spelling('session_required: true', 'role: <role>.session', 'the role\'s web-session login (cookie + CSRF) instead of its API token, declared as its own role in the pack');
    }
    if ('pre_setup' in inputs) {
      rename(inputs, 'pre_setup', 'pre_request', ctx, 'a request sent before the login (e.g. the first-admin setup)');
    }
    if ('header_key' in inputs || 'header_user' in inputs) {
      const key = inputs.header_key;
      const user = inputs.header_user;
      delete inputs.header_key;
      delete inputs.header_user;
      if (typeof key !== 'string' || typeof user !== 'string') ctx.issue('inputs.header_key', 'header_key and header_user are header names');
      else inputs.send_headers = { [user]: '{{user_id}}', [key]: '{{token}}' };
      ctx.spelling('header_key/header_user', 'send_headers', 'the header names carrying the API token and the user id (the login captures user_id)');
    }
    const tokenVars = Object.hasOwn(TOKEN_VARS, ctx.task) ? TOKEN_VARS[ctx.task] : undefined;
    const vars = tokenVars !== undefined && typeof inputs.role === 'string' && !inputs.role.includes('.') && inputs.expect !== 'refused' ? tokenVars(inputs.role, inputs.method) : undefined;
    if (vars) {
      inputs.token_as = vars;
      ctx.spelling('(token kept under a role-derived name)', 'token_as', `${ctx.task}'s evaluator left the role's token in a variable the DAG reads (${vars.join(', ')})`);
    }
    return { type, inputs };
  },
};
