// loadCompose: YAML -> interpolation -> strict zod validation -> normalized ComposeProject.
// Every failure is a ComposeError naming the file and the JSON path of the offending key.
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import type { z } from 'zod';
import { ComposeError } from './errors';
import { interpolate, InterpolationSyntaxError, parseDotenv } from './interpolate';
import { ComposeProject, RawCompose, RawService } from './compose-schema';
import { normalizeService, type NormalizeContext } from './compose-normalize';
import { jsonPath } from '../model/json';
import { firstZodIssue } from '../zod-issues';

export interface LoadComposeOptions {
  /** Highest-precedence interpolation variables (e.g. IMAGE_TAG chosen by the harness). */
  env?: Record<string, string>;
  /**
   * File names tried, in the compose file's directory, when an `env_file` or the interpolation
   * `.env` is missing. The published SaaSBench layout ships `.env.example` but references `.env`.
   */
  envFileFallbacks?: string[];
  /** Defaults to process.env; tests pass {} for hermetic results. */
  processEnv?: Record<string, string | undefined>;
}

type PathSeg = string | number;

// one JSON-path renderer for the whole project (src/model/json.ts); re-exported for the sandbox's callers
export { jsonPath };

export function loadCompose(file: string, opts: LoadComposeOptions = {}): ComposeProject {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  const fail = (segs: readonly PathSeg[], sentence: string): never => {
    throw new ComposeError(file, jsonPath(segs), sentence);
  };

  let text: string;
  try {
    text = fs.readFileSync(abs, 'utf8');
  } catch (err) {
    throw new ComposeError(file, '', `cannot read the compose file (${(err as Error).message})`, { cause: err });
  }
  const doc = YAML.parseDocument(text, { merge: true, prettyErrors: true });
  if (doc.errors.length > 0) fail([], `invalid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  const parsed: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) fail([], 'the file must be a YAML mapping');

  const warnings: string[] = [];
  const dotenvFile = findWithFallbacks(path.join(dir, '.env'), opts.envFileFallbacks ?? []);
  if (dotenvFile && path.basename(dotenvFile) !== '.env') {
    warnings.push(`.env is missing; interpolating from ${path.basename(dotenvFile)} instead`);
  }
  const dotenv = dotenvFile ? parseDotenv(fs.readFileSync(dotenvFile, 'utf8')) : {};
  // Same precedence as docker compose (shell env beats .env), with the caller's env on top.
  const env: Record<string, string | undefined> = { ...dotenv, ...(opts.processEnv ?? process.env), ...opts.env };

  const raw = stripExtensions(parsed as Record<string, unknown>);
  const missing = new Set<string>();
  const interpolated = interpolateTree(raw, env, [], missing, fail);
  for (const name of missing) warnings.push(`variable ${name} is not set; substituted an empty string`);

  const result = RawCompose.safeParse(interpolated);
  if (!result.success) throw zodToComposeError(file, result.error);
  const top = result.data;
  if (top.version !== undefined) warnings.push('top-level "version" is obsolete and ignored');

  const volumes: Record<string, Record<string, never>> = {};
  for (const [name, v] of Object.entries(top.volumes ?? {})) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) fail(['volumes', name], `"${name}" is not a valid volume name`);
    // a fixed name would make two rollouts share the volume; every volume is the rollout's own
    if (v?.name) warnings.push(`volumes.${name}.name "${v.name}" is ignored: volumes are named per rollout`);
    volumes[name] = {};
  }
  // Every network of the file is the rollout's one bridge (isolation: docs/security.md); names are
  // kept only to check references, `name:` is ignored like a volume's.
  const networks = new Set(['default']);
  for (const [name, n] of Object.entries(top.networks ?? {})) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) fail(['networks', name], `"${name}" is not a valid network name`);
    if (n?.name) warnings.push(`networks.${name}.name "${n.name}" is ignored: every network is the rollout's own bridge`);
    networks.add(name);
  }

  const ctx: NormalizeContext = {
    dir,
    env,
    volumes: new Set(Object.keys(volumes)),
    networks,
    envFileFallbacks: opts.envFileFallbacks ?? [],
    warnings,
    fail,
    findWithFallbacks,
  };
  const services: ComposeProject['services'] = {};
  for (const [name, svc] of Object.entries(top.services)) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) {
      fail(['services', name], `"${name}" is not a valid service name (letters, digits, "_", ".", "-")`);
    }
    services[name] = normalizeService(name, svc as z.infer<typeof RawService>, ctx);
  }
  if (Object.keys(services).length === 0) fail(['services'], 'at least one service is required');

  const order = startOrder(services, fail);
  return ComposeProject.parse({ name: top.name, file: abs, dir, services, volumes, networks: Object.keys(top.networks ?? {}), order, warnings });
}

/** `path` if it exists, else the first existing fallback name in the same directory, else null. */
function findWithFallbacks(p: string, fallbacks: string[]): string | null {
  if (fs.existsSync(p)) return p;
  for (const f of fallbacks) {
    const alt = path.join(path.dirname(p), f);
    if (fs.existsSync(alt)) return alt;
  }
  return null;
}

// Compose ignores `x-*` keys at the top level and inside services (they exist for YAML anchors).
function stripExtensions(top: Record<string, unknown>): Record<string, unknown> {
  const out = dropX(top);
  const services = out.services;
  if (services && typeof services === 'object' && !Array.isArray(services)) {
    out.services = Object.fromEntries(
      Object.entries(services as Record<string, unknown>).map(([k, v]) => [
        k,
        v && typeof v === 'object' && !Array.isArray(v) ? dropX(v as Record<string, unknown>) : v,
      ]),
    );
  }
  return out;
}

function dropX(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('x-')));
}

function interpolateTree(
  v: unknown,
  env: Record<string, string | undefined>,
  segs: PathSeg[],
  missing: Set<string>,
  fail: (segs: readonly PathSeg[], sentence: string) => never,
): unknown {
  if (typeof v === 'string') {
    try {
      const r = interpolate(v, env);
      r.missing.forEach((m) => missing.add(m));
      return r.value;
    } catch (err) {
      if (err instanceof InterpolationSyntaxError) fail(segs, err.message);
      throw err;
    }
  }
  if (Array.isArray(v)) return v.map((x, i) => interpolateTree(x, env, [...segs, i], missing, fail));
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, interpolateTree(x, env, [...segs, k], missing, fail)]),
    );
  }
  return v;
}

function zodToComposeError(file: string, error: z.ZodError): ComposeError {
  const first = firstZodIssue(error);
  const more = first.more > 0 ? ` (and ${first.more} more problem(s))` : '';
  return new ComposeError(file, first.path, first.message + more);
}

/** Dependencies first, declaration order otherwise; a cycle or unknown dependency is an error. */
function startOrder(
  services: ComposeProject['services'],
  fail: (segs: readonly PathSeg[], sentence: string) => never,
): string[] {
  const names = Object.keys(services);
  for (const name of names) {
    for (const dep of Object.keys(services[name].dependsOn)) {
      if (!services[dep]) fail(['services', name, 'depends_on', dep], `depends on unknown service "${dep}"`);
      if (dep === name) fail(['services', name, 'depends_on', dep], 'a service cannot depend on itself');
    }
  }
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, chain: string[]): void => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting') {
      fail(['services', name, 'depends_on'], `dependency cycle: ${[...chain, name].join(' -> ')}`);
    }
    state.set(name, 'visiting');
    for (const dep of Object.keys(services[name].dependsOn)) visit(dep, [...chain, name]);
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of names) visit(name, []);
  return order;
}
