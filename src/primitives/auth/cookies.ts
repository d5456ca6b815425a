import type { StoredCookie } from '../types';

/**
 * A minimal cookie jar for one origin (the app under test): name, value, path and expiry. Domain,
 * Secure and SameSite are not needed because every request goes to the same loopback origin.
 */
export function parseSetCookie(line: string, now = Date.now()): StoredCookie | { delete: string; path: string } | null {
  const parts = line.split(';').map((p) => p.trim());
  const first = parts.shift() ?? '';
  const eq = first.indexOf('=');
  if (eq <= 0) return null;
  const name = first.slice(0, eq).trim();
  const value = first.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  let path = '/';
  let expires: number | undefined;
  let maxAge: number | undefined;
  for (const attr of parts) {
    const i = attr.indexOf('=');
    const k = (i < 0 ? attr : attr.slice(0, i)).trim().toLowerCase();
    const v = i < 0 ? '' : attr.slice(i + 1).trim();
    if (k === 'path' && v.startsWith('/')) path = v;
    else if (k === 'max-age' && /^-?\d+$/.test(v)) maxAge = Number(v);
    else if (k === 'expires') {
      const t = Date.parse(v);
      if (!Number.isNaN(t)) expires = t;
    }
  }
  if (maxAge !== undefined) expires = now + maxAge * 1000;
  if (expires !== undefined && expires <= now) return { delete: name, path };
  return { name, value, path, expires };
}

/**
 * Split a Set-Cookie header that was joined with ", " (as ../http.ts flattens headers) back into
 * lines: a comma starts a new cookie only when a `token=` follows (Expires dates contain commas).
 */
export function splitJoinedSetCookie(joined: string): string[] {
  return joined.split(/,(?=\s*[^;,=\s]+=)/).map((s) => s.trim()).filter(Boolean);
}

/** Apply Set-Cookie lines to a jar (returns a new array). */
export function absorbCookies(jar: readonly StoredCookie[], lines: readonly string[], now = Date.now()): StoredCookie[] {
  let out = jar.filter((c) => c.expires === undefined || c.expires > now);
  for (const line of lines) {
    const c = parseSetCookie(line, now);
    if (!c) continue;
    if ('delete' in c) {
      out = out.filter((x) => !(x.name === c.delete && x.path === c.path));
      continue;
    }
    out = out.filter((x) => !(x.name === c.name && x.path === c.path));
    out.push(c);
  }
  return out;
}

/** The Cookie header for a request path ('' when nothing applies); longer paths first, as browsers do. */
export function cookieHeader(jar: readonly StoredCookie[], requestPath: string, now = Date.now()): string {
  const p = requestPath.split('?')[0] || '/';
  return jar
    .filter((c) => (c.expires === undefined || c.expires > now) && (p === c.path || p.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) || c.path === '/'))
    .sort((a, b) => b.path.length - a.path.length)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}
