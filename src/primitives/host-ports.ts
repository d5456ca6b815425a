import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { interpolate, parseDotenv } from '../sandbox';

/**
 * The host ports a compose file publishes: `"9201:9200"` on service elasticsearch → 9201 ↦
 * {service: elasticsearch, target: 9200}. Published DAGs address the stack from the host
 * (`http://localhost:9201/…`); saasbench binds every published port to a random loopback port, so
 * the host port is translated through this map (PrimitiveEnv.hostPortUrl). Variables are
 * interpolated from the `.env` beside the file (or its fallbacks), as compose does.
 */
export function publishedHostPorts(composeFile: string, envFileFallbacks: readonly string[] = []): Map<number, { service: string; target: number }> {
  const out = new Map<number, { service: string; target: number }>();
  let doc: unknown;
  try {
    doc = YAML.parse(readFileSync(composeFile, 'utf8'), { merge: true });
  } catch {
    return out;
  }
  const dir = dirname(composeFile);
  const envFile = ['.env', ...envFileFallbacks].map((f) => join(dir, f)).find((f) => existsSync(f));
  const env: Record<string, string | undefined> = envFile ? parseDotenv(readFileSync(envFile, 'utf8')) : {};
  const expand = (s: string) => {
    try {
      return interpolate(s, env).value;
    } catch {
      return s;
    }
  };
  const services = (doc as { services?: Record<string, { ports?: unknown[] }> } | null)?.services ?? {};
  for (const [service, spec] of Object.entries(services)) {
    for (const p of spec?.ports ?? []) {
      let published: number | undefined;
      let target: number | undefined;
      if (typeof p === 'object' && p !== null) {
        const o = p as { target?: unknown; published?: unknown };
        target = Number(o.target);
        published = o.published === undefined ? undefined : Number(expand(String(o.published)).split('-')[0]);
      } else {
        const s = expand(String(p)).replace(/\/(tcp|udp)$/i, '');
        const parts = s.split(':');
        if (parts.length < 2) continue;
        target = Number(parts[parts.length - 1].split('-')[0]);
        published = Number(parts[parts.length - 2].split('-')[0]);
      }
      if (published && target && Number.isInteger(published) && Number.isInteger(target) && !out.has(published)) out.set(published, { service, target });
    }
  }
  return out;
}
