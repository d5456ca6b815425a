// Turns one validated raw service into a normalized ServiceSpec: resolves paths against the
// compose directory, reads env files, and parses the scalar mini-languages.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { z } from 'zod';
import type { RawService, ServiceSpec, MountSpec, HealthcheckSpec } from './compose-schema';
import { parseDotenv } from './interpolate';
import {
  ValueError,
  parseByteSize,
  parseDuration,
  parsePort,
  parseVolumeShort,
  shellSplit,
  type PortSpec,
} from './compose-values';

type PathSeg = string | number;

export interface NormalizeContext {
  dir: string;
  env: Record<string, string | undefined>;
  volumes: Set<string>;
  /** declared top-level networks plus `default` */
  networks: Set<string>;
  envFileFallbacks: string[];
  warnings: string[];
  fail: (segs: readonly PathSeg[], sentence: string) => never;
  findWithFallbacks: (p: string, fallbacks: string[]) => string | null;
}

type Raw = z.infer<typeof RawService>;

const HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,62})(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,62}))*$/;

export function normalizeService(name: string, raw: Raw, ctx: NormalizeContext): ServiceSpec {
  const at = (...segs: PathSeg[]): PathSeg[] => ['services', name, ...segs];
  // Value parsers throw ValueError; re-throw as ComposeError at the right path.
  const guard = <T>(segs: PathSeg[], fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ValueError) return ctx.fail(segs, err.message);
      throw err;
    }
  };

  if (raw.image === undefined && raw.build === undefined) ctx.fail(at(), 'a service needs "image" or "build"');

  const environment: Record<string, string> = {};
  for (const [i, f] of toList(raw.env_file).entries()) {
    Object.assign(environment, readEnvFile(f, at('env_file', ...(Array.isArray(raw.env_file) ? [i] : [])), ctx));
  }
  Object.assign(environment, keyValues(raw.environment, ctx.env, '='));

  const ports: PortSpec[] = (raw.ports ?? []).map((p, i) =>
    guard(at('ports', i), () => (typeof p === 'object' ? { target: parsePort(p.target).target, protocol: p.protocol ?? 'tcp' } : parsePort(p))),
  );

  const mounts: MountSpec[] = (raw.volumes ?? []).map((v, i) => {
    const m = guard(at('volumes', i), (): MountSpec => {
      if (typeof v === 'string') return parseVolumeShort(v);
      if (!v.target.startsWith('/')) throw new ValueError(`target "${v.target}" must be an absolute path`);
      if (v.source === undefined || v.source === '') {
        if (v.type === 'bind') throw new ValueError('a bind mount needs a source');
        return { type: 'anonymous', target: v.target };
      }
      return { type: v.type, source: v.source, target: v.target, readOnly: v.read_only ?? false };
    });
    if (m.type === 'volume' && !ctx.volumes.has(m.source)) {
      ctx.fail(at('volumes', i), `named volume "${m.source}" is not declared under the top-level "volumes"`);
    }
    if (m.type === 'bind') return { ...m, source: resolveHostPath(m.source, ctx.dir) };
    return m;
  });

  const dependsOn: ServiceSpec['dependsOn'] = {};
  if (Array.isArray(raw.depends_on)) raw.depends_on.forEach((d) => (dependsOn[d] = 'service_started'));
  else for (const [d, v] of Object.entries(raw.depends_on ?? {})) dependsOn[d] = v?.condition ?? 'service_started';

  const aliases: string[] = [];
  const nets = raw.networks === undefined ? [] : Array.isArray(raw.networks) ? raw.networks.map((n) => [n, null] as const) : Object.entries(raw.networks);
  nets.forEach(([net, cfg], i) => {
    const segs = at('networks', ...(Array.isArray(raw.networks) ? [i] : [net]));
    if (!ctx.networks.has(net)) ctx.fail(segs, `network "${net}" is not declared under the top-level "networks"`);
    for (const [j, a] of (cfg?.aliases ?? []).entries()) {
      if (!HOSTNAME.test(a)) ctx.fail([...segs, 'aliases', j], `"${a}" is not a valid host name`);
      if (a !== name && !aliases.includes(a)) aliases.push(a);
    }
  });
  for (const [i, e] of (raw.expose ?? []).entries()) guard(at('expose', i), () => parsePort(e));

  const spec: ServiceSpec = {
    name,
    image: raw.image,
    build: raw.build === undefined ? undefined : normalizeBuild(raw.build, ctx),
    environment,
    ports,
    mounts,
    dependsOn,
    healthcheck: raw.healthcheck === undefined ? undefined : guard(at('healthcheck'), () => normalizeHealthcheck(raw.healthcheck!)),
    command: raw.command == null ? undefined : typeof raw.command === 'string' ? guard(at('command'), () => shellSplit(raw.command as string)) : raw.command,
    entrypoint:
      raw.entrypoint == null ? undefined : typeof raw.entrypoint === 'string' ? guard(at('entrypoint'), () => shellSplit(raw.entrypoint as string)) : raw.entrypoint,
    workingDir: raw.working_dir,
    tmpfs: Object.fromEntries(
      toList(raw.tmpfs).map((t) => {
        const c = t.indexOf(':');
        return c < 0 ? [t, ''] : [t.slice(0, c), t.slice(c + 1)];
      }),
    ),
    stdinOpen: raw.stdin_open ?? false,
    tty: raw.tty ?? false,
    init: raw.init ?? true,
    dns: toList(raw.dns),
    hostname: raw.hostname,
    user: raw.user === undefined ? undefined : String(raw.user),
    labels: keyValues(raw.labels, {}, '='),
    extraHosts: extraHosts(raw.extra_hosts),
    shmSize: raw.shm_size === undefined ? undefined : guard(at('shm_size'), () => parseByteSize(raw.shm_size!)),
    ulimits: Object.entries(raw.ulimits ?? {}).map(([n, u]) =>
      typeof u === 'number' ? { name: n, soft: u, hard: u } : { name: n, soft: u.soft, hard: u.hard },
    ),
    aliases,
    pullPolicy: raw.pull_policy === 'if_not_present' ? 'missing' : raw.pull_policy,
  };
  for (const [i, t] of Object.keys(spec.tmpfs).entries()) {
    if (!t.startsWith('/')) ctx.fail(at('tmpfs', i), `"${t}" must be an absolute path`);
  }
  if (spec.workingDir !== undefined && !spec.workingDir.startsWith('/')) {
    ctx.fail(at('working_dir'), `"${spec.workingDir}" must be an absolute path`);
  }
  return spec;
}

function toList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function resolveHostPath(p: string, dir: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(os.homedir(), p.slice(1));
  return path.resolve(dir, p);
}

function readEnvFile(f: string, segs: PathSeg[], ctx: NormalizeContext): Record<string, string> {
  const wanted = path.resolve(ctx.dir, f);
  const found = ctx.findWithFallbacks(wanted, ctx.envFileFallbacks);
  if (!found) {
    const alt = ctx.envFileFallbacks.length ? ` (also tried ${ctx.envFileFallbacks.join(', ')})` : '';
    return ctx.fail(segs, `env_file "${f}" does not exist at ${wanted}${alt}`);
  }
  if (found !== wanted) ctx.warnings.push(`env_file "${f}" is missing; used ${path.relative(ctx.dir, found)} instead`);
  return parseDotenv(fs.readFileSync(found, 'utf8'));
}

/**
 * Map or `K=V` list to a record. A bare `K` (list) or `K: null` (map) takes its value from the
 * interpolation environment and is dropped when unset, like compose does.
 */
function keyValues(
  v: Record<string, string | number | boolean | null> | string[] | undefined,
  env: Record<string, string | undefined>,
  sep: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (v === undefined) return out;
  const set = (k: string, val: string | undefined) => {
    if (val !== undefined) out[k] = val;
  };
  if (Array.isArray(v)) {
    for (const item of v) {
      const i = item.indexOf(sep);
      if (i < 0) set(item, env[item]);
      else set(item.slice(0, i), item.slice(i + 1));
    }
  } else {
    for (const [k, val] of Object.entries(v)) set(k, val === null ? env[k] : String(val));
  }
  return out;
}

function extraHosts(v: Record<string, string | number | boolean | null> | string[] | undefined): string[] {
  if (v === undefined) return [];
  if (Array.isArray(v)) return v.map((h) => h.replace(/^([^:=]+)=/, '$1:'));
  return Object.entries(v).map(([h, ip]) => `${h}:${String(ip)}`);
}

function normalizeBuild(raw: NonNullable<Raw['build']>, ctx: NormalizeContext): NonNullable<ServiceSpec['build']> {
  const obj = typeof raw === 'string' ? { context: raw } : raw;
  const context = resolveHostPath(obj.context ?? '.', ctx.dir);
  return {
    context,
    dockerfile: path.resolve(context, obj.dockerfile ?? 'Dockerfile'),
    args: keyValues(obj.args, ctx.env, '='),
  };
}

function normalizeHealthcheck(raw: NonNullable<Raw['healthcheck']>): HealthcheckSpec | null {
  if (raw.disable) return null;
  let test: string[] | undefined;
  if (typeof raw.test === 'string') test = ['CMD-SHELL', raw.test];
  else if (raw.test) {
    const kind = raw.test[0];
    if (kind === 'NONE') return null;
    if (kind !== 'CMD' && kind !== 'CMD-SHELL') {
      throw new ValueError(`test must start with "CMD", "CMD-SHELL" or "NONE" (got "${kind}")`);
    }
    if (raw.test.length < 2) throw new ValueError(`test ["${kind}"] needs a command`);
    test = raw.test;
  }
  const ns = (d: string | undefined, key: string) => {
    if (d === undefined) return undefined;
    try {
      return parseDuration(d);
    } catch (err) {
      throw new ValueError(`${key}: ${(err as Error).message}`);
    }
  };
  return {
    test,
    intervalNs: ns(raw.interval, 'interval'),
    timeoutNs: ns(raw.timeout, 'timeout'),
    startPeriodNs: ns(raw.start_period, 'start_period'),
    startIntervalNs: ns(raw.start_interval, 'start_interval'),
    retries: raw.retries,
  };
}
