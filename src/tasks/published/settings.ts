import type { Json } from '../../model/json';

/**
 * Test users: `TEST_USERS = {...}` in the evaluator's config.py when present (a Python dict
 * literal; `os.environ.get("X", "default")` values read as their default), else the prompt's
 * bullet list `- Admin: username=`eval_admin`, email=`…`, password=`…``.
 */
export function parseTestUsers(configPy: string | null, prompt: string): { users: Record<string, Record<string, string>>; source: string } {
  if (configPy) {
    const lit = pythonDictLiteral(configPy, 'TEST_USERS');
    if (lit) {
      try {
        const v = JSON.parse(lit) as Record<string, Record<string, unknown>>;
        const users: Record<string, Record<string, string>> = {};
        for (const [role, fields] of Object.entries(v)) {
          if (!fields || typeof fields !== 'object') continue;
          users[role] = Object.fromEntries(Object.entries(fields).filter(([, x]) => typeof x === 'string' || typeof x === 'number').map(([k, x]) => [k, String(x)]));
        }
        return { users, source: 'config.py TEST_USERS' };
      } catch {
        // fall through to the prompt
      }
    }
  }
  const users: Record<string, Record<string, string>> = {};
  for (const line of prompt.split('\n')) {
    const m = /^\s*[-*]\s*([A-Za-z][A-Za-z0-9 _-]*?)\s*:\s*(.*username\s*=.*)$/.exec(line);
    if (!m) continue;
    const role = m[1].trim().toLowerCase().replace(/[^a-z0-9]+/g, '_');
    const fields: Record<string, string> = {};
    for (const f of m[2].matchAll(/\b([a-z_]+)\s*=\s*`([^`]*)`/g)) fields[f[1]] = f[2];
    if (fields.username) users[role] = fields;
  }
  return { users, source: Object.keys(users).length ? 'the prompt' : 'nowhere' };
}

/** A `NAME = {...}` Python dict literal rewritten as JSON text, or null. Read, never executed. */
function pythonDictLiteral(py: string, name: string): string | null {
  const at = py.search(new RegExp(`^${name}\\s*=\\s*\\{`, 'm'));
  if (at < 0) return null;
  const open = py.indexOf('{', at);
  let depth = 0;
  for (let i = open; i < py.length; i++) {
    if (py[i] === '{') depth++;
    else if (py[i] === '}' && --depth === 0) {
      return py
        .slice(open, i + 1)
        .replace(/#[^\n]*/g, '')
        .replace(/os\.(?:environ\.get|getenv)\(\s*(['"])[^'"]*\1\s*,\s*((['"])[^'"]*\3)\s*\)/g, '$2')
        .replace(/'([^'\\]*)'/g, (_m, s: string) => JSON.stringify(s))
        .replace(/\bTrue\b/g, 'true')
        .replace(/\bFalse\b/g, 'false')
        .replace(/\bNone\b/g, 'null')
        .replace(/,(\s*[}\]])/g, '$1');
    }
  }
  return null;
}

/** `<role>_<field>` and `eval_<role>_<field>`, as the published evaluator seeds its context. */
export function userVariables(users: Record<string, Record<string, string>>): Record<string, Json> {
  const vars: Record<string, Json> = {};
  for (const [role, fields] of Object.entries(users)) {
    for (const [k, v] of Object.entries(fields)) {
      vars[`${role}_${k}`] = v;
      vars[`eval_${role}_${k}`] = v;
    }
  }
  return vars;
}

/** Auth header names: config.py AUTH_HEADER_KEY / AUTH_HEADER_USER, else `Name` + `Name` pairs the prompt names. */
export function parseAuthHeaders(configPy: string | null, prompt: string): string[] {
  const out: string[] = [];
  if (configPy) for (const m of configPy.matchAll(/^AUTH_HEADER_\w+\s*=\s*['"]([^'"]+)['"]/gm)) out.push(m[1]);
  if (out.length) return out;
  for (const m of prompt.matchAll(/`([A-Z][A-Za-z-]*-(?:Key|Username|Token|User))`/g)) if (!out.includes(m[1])) out.push(m[1]);
  return out;
}
