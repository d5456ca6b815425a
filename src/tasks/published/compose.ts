import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import YAML from 'yaml';
import type { InputIssue } from '../../errors';
import { interpolate, loadCompose, parseDotenv, type ComposeProject } from '../../sandbox';
import { findFirst } from './layout';

/** Service names the published drivers treat as infrastructure when picking the agent's service. */
const INFRA = new Set(['db', 'redis', 'postgres', 'postgresql', 'mysql', 'mariadb', 'mongo', 'mongodb', 'rabbitmq', 'kafka', 'zookeeper', 'elasticsearch', 'memcached', 'minio', 'neo4j', 'clickhouse', 'schema-registry', 'mock-receiver', 'worker', 'queue', 'scheduler', 'cache', 'broker', 'celery', 'ollama', 'milvus', 'qdrant', 'weaviate', 'vault', 'consul']);

/**
 * What the published prepare script exports before `docker compose up` for a model run
 * (prepare_workspace.sh): the model image variant, and an idle PID 1 instead of the baseline app.
 * Highest precedence when the derived compose file is interpolated (over `.env` and the shell).
 */
export const PUBLISHED_COMPOSE_ENV: Readonly<Record<string, string>> = Object.freeze({ IMAGE_TAG: 'model', APP_CMD: 'sleep infinity' });

/** PUBLISHED_COMPOSE_ENV as `.env` lines, for an imported task (its `.env` is its only interpolation source). */
export function modelRunDotenv(): string {
  return `\n# a model run, as the published prepare_workspace.sh starts it (saasbench tasks import)\n${Object.entries(PUBLISHED_COMPOSE_ENV).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join('\n')}\n`;
}

/** The named volume that replaces the published `./workspace` bind mount (one per rollout: volumes are namespaced by stack). */
export const WORKSPACE_VOLUME = 'saasbench_workspace';

type RawVolume = string | { type?: string; source?: string; target?: string; read_only?: boolean; [k: string]: unknown };
type RawService = { volumes?: RawVolume[]; build?: string | { context?: string; dockerfile?: string; [k: string]: unknown }; env_file?: string | string[]; working_dir?: string; ports?: unknown[]; [k: string]: unknown };
export type RawCompose = { services?: Record<string, RawService>; volumes?: Record<string, unknown>; [k: string]: unknown };

const isPathSource = (s: string) => s.startsWith('.') || s.startsWith('/') || s.startsWith('~');

/**
 * The published compose file with its workspace bind mount (`./workspace:/app`, a folder inside
 * the published tree) replaced by the named volume `saasbench_workspace`: the published tree is
 * read-only here and shared between rollouts, while a named volume is created per rollout (stack
 * volumes are namespaced by the rollout's project). Any bind of `<docker>/workspace`, and any bind
 * onto the app's workspace, is rewritten. With `absolutize`, every other relative path (bind
 * sources, build contexts, env files) is made absolute so the file can live elsewhere, and a
 * missing env file falls back to `.env.example`.
 */
export function rewritePublishedCompose(raw: RawCompose, dockerDir: string, appService: string, workspace: string, absolutize: boolean): { doc: RawCompose; notes: string[] } {
  const doc = JSON.parse(JSON.stringify(raw)) as RawCompose;
  const notes: string[] = [];
  const wsHost = resolve(dockerDir, 'workspace');
  let used = false;
  const hostVolumes = new Map<string, string>();
  const env = composeEnvOf(dockerDir);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dockerDir, p));
  for (const [name, svc] of Object.entries(doc.services ?? {})) {
    svc.volumes = (svc.volumes ?? []).map((v) => {
      if (typeof v === 'string') {
        const parts = splitVolume(v);
        // a host directory outside the task (mjobbzsi's `${CONFIG:-~/.conference-cfg}/jvb`, state the
        // published stacks kept in the operator's home): a fresh volume per rollout instead, so no
        // rollout reads or writes the host and none sees another's state
        const hostDir = parts.length >= 2 ? hostDirOf(parts[0], env, dockerDir) : null;
        if (hostDir) {
          const vol = hostVolumes.get(hostDir) ?? `saasbench_host_${hostVolumes.size}`;
          hostVolumes.set(hostDir, vol);
          notes.push(`compose: services.${name}.volumes "${v}" → named volume ${vol} (a host directory outside the task: empty and per rollout)`);
          return [vol, parts[1], ...parts.slice(2).filter((p) => !['z', 'Z', 'rw'].includes(p))].join(':');
        }
        if (parts.length < 2 || !isPathSource(parts[0])) return v;
        const src = abs(parts[0]);
        if (src === wsHost || (name === appService && parts[1] === workspace)) {
          used = true;
          notes.push(`compose: services.${name}.volumes "${v}" → named volume ${WORKSPACE_VOLUME} (per rollout; the published folder is read-only and shared)`);
          return [WORKSPACE_VOLUME, ...parts.slice(1).filter((p) => p !== 'rw')].join(':');
        }
        return absolutize ? [src, ...parts.slice(1)].join(':') : v;
      }
      if (v && v.type === 'bind' && typeof v.source === 'string') {
        const src = abs(v.source);
        if (src === wsHost || (name === appService && v.target === workspace)) {
          used = true;
          notes.push(`compose: services.${name}.volumes bind ${v.source} → named volume ${WORKSPACE_VOLUME}`);
          return { ...v, type: 'volume', source: WORKSPACE_VOLUME };
        }
        return absolutize ? { ...v, source: src } : v;
      }
      return v;
    });
    if (svc.volumes.length === 0) delete svc.volumes;
    if (absolutize) {
      if (typeof svc.build === 'string') svc.build = abs(svc.build);
      else if (svc.build && typeof svc.build === 'object') svc.build = { ...svc.build, context: abs(svc.build.context ?? '.') };
      if (svc.env_file !== undefined) {
        const list = Array.isArray(svc.env_file) ? svc.env_file : [svc.env_file];
        svc.env_file = list.map((f) => {
          const p = abs(f);
          if (existsSync(p)) return p;
          const example = resolve(dockerDir, `${basename(f)}.example`);
          if (existsSync(example)) {
            notes.push(`compose: services.${name}.env_file ${f} is missing; using ${basename(example)}`);
            return example;
          }
          return p;
        });
      }
    }
  }
  if (used) doc.volumes = { ...(doc.volumes ?? {}), [WORKSPACE_VOLUME]: {} };
  for (const vol of hostVolumes.values()) doc.volumes = { ...(doc.volumes ?? {}), [vol]: {} };
  return { doc, notes };
}

/**
 * The app image of a published model run is `shadetocloak/task_<id>-app:${IMAGE_TAG}` pulled from
 * Docker Hub, built from the task's Dockerfile.model. Make that Dockerfile the service's build, so
 * the image is used when present (or pullable) and built here otherwise (image-plan.ts); a baseline
 * `build:` (the reference environment) is replaced, since IMAGE_TAG=model never builds it.
 */
export function useModelDockerfile(doc: RawCompose, dockerDir: string, appService: string, relative = false): string[] {
  const image = doc.services?.[appService]?.image;
  const model = join(dockerDir, 'Dockerfile.model');
  if (typeof image !== 'string' || !image.includes('${IMAGE_TAG') || !existsSync(model)) return [];
  const notes: string[] = [];
  // a worker running the app's image (jzssnoqp, xayqujrv) gets the same build
  for (const [name, svc] of Object.entries(doc.services ?? {})) {
    if (svc.image !== image) continue;
    const had = svc.build !== undefined;
    svc.build = relative ? { context: '.', dockerfile: 'Dockerfile.model' } : { context: dockerDir, dockerfile: model };
    notes.push(`compose: services.${name}.build → Dockerfile.model${had ? ' (instead of the baseline build section)' : ''}: built when ${image.replace(/\$\{IMAGE_TAG[^}]*\}/, 'model')} is neither present nor pullable`);
  }
  return notes;
}

/** A short volume spec split at its colons, except those inside `${…}` (`${CONFIG:-~/cfg}/x:/config:Z`). */
function splitVolume(v: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let depth = 0;
  for (let i = 0; i < v.length; i++) {
    if (v.startsWith('${', i)) depth++;
    else if (v[i] === '}' && depth > 0) depth--;
    if (v[i] === ':' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += v[i];
  }
  parts.push(cur);
  return parts;
}

/** The variables a published compose file is interpolated with: its `.env` (or `.env.example`) under the model-run values. */
function composeEnvOf(dockerDir: string): Record<string, string> {
  const dotenv = findFirst([join(dockerDir, '.env'), join(dockerDir, '.env.example')]);
  return { ...(dotenv ? parseDotenv(readFileSync(dotenv, 'utf8')) : {}), ...PUBLISHED_COMPOSE_ENV };
}

/** The host directory a volume source names when it lies outside the task's docker folder (`~`, an absolute path), else null. */
function hostDirOf(source: string, env: Record<string, string>, dockerDir: string): string | null {
  let s: string;
  try {
    s = interpolate(source, env).value;
  } catch {
    return null;
  }
  if (!(s.startsWith('/') || s.startsWith('~'))) return null;
  const p = resolve(s.replace(/^~(?=\/|$)/, '/root'));
  const inside = p === dockerDir || p.startsWith(`${resolve(dockerDir)}/`);
  return inside ? null : p;
}

/** `app`, else `web`, else the first non-infrastructure service (the published driver's rule). */
export function appServiceOf(services: string[]): string {
  return ['app', 'web'].find((s) => services.includes(s)) ?? services.filter((s) => !INFRA.has(s)).sort()[0] ?? services[0];
}

export interface DerivedCompose {
  raw: RawCompose;
  composeFile: string;
  project?: ComposeProject;
  appService: string;
  workspace: string;
  notes: string[];
  issues: InputIssue[];
}

/**
 * Read the published compose file and write the derived copy the task runs with (see
 * rewritePublishedCompose) under `derivedDir`, with the task's `.env` (or `.env.example`) beside
 * it so `${VAR}` interpolation sees the published values. Written only when the text changed.
 */
export function derivePublishedCompose(composeFile: string, dockerDir: string, derivedDir: string, appServiceOverride?: string): DerivedCompose {
  const notes: string[] = [];
  const issues: InputIssue[] = [];
  const raw = (YAML.parse(readFileSync(composeFile, 'utf8')) ?? {}) as RawCompose;
  const services = Object.keys(raw.services ?? {});
  const appService = appServiceOverride ?? appServiceOf(services);
  const workspace = raw.services?.[appService]?.working_dir ?? '/app';
  const { doc, notes: rewriteNotes } = rewritePublishedCompose(raw, dockerDir, appService, workspace, true);
  notes.push(...rewriteNotes);
  notes.push(...useModelDockerfile(doc, dockerDir, appService));
  const derived = join(derivedDir, 'docker-compose.yml');
  let project: ComposeProject | undefined;
  try {
    mkdirSync(derivedDir, { recursive: true });
    const text = `# derived by saasbench from ${composeFile}: workspace bind → named volume, paths absolute\n${YAML.stringify(doc)}`;
    if (!existsSync(derived) || readFileSync(derived, 'utf8') !== text) writeFileSync(derived, text);
    const dotenv = findFirst([join(dockerDir, '.env'), join(dockerDir, '.env.example')]);
    if (dotenv) {
      const envText = readFileSync(dotenv, 'utf8');
      const target = join(derivedDir, '.env');
      if (!existsSync(target) || readFileSync(target, 'utf8') !== envText) writeFileSync(target, envText, { mode: 0o644 });
      if (basename(dotenv) !== '.env') notes.push('.env is missing: compose variables are interpolated from .env.example');
    }
    project = loadCompose(derived, { processEnv: {}, env: { ...PUBLISHED_COMPOSE_ENV } });
  } catch (e) {
    const err = e as Error & { path?: string };
    issues.push({ file: composeFile, path: err.path ?? '', message: `compose: ${err.message}` });
  }
  return { raw, composeFile: derived, project, appService, workspace, notes, issues };
}
