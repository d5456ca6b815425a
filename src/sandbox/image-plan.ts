// Which image each service of a stack runs, and how it is obtained — used both by the preflight
// (`tasks check`, `run`, `sweep`, the start of provision: seconds, nothing built) and by
// buildImages (which then does it). The rules follow compose:
//   image only            present → use; else pull (pull_policy always: pull first)
//   build only            build (content-hash tag)
//   image + build         pull_policy build → build; present → use; never → build;
//                         else pull when a registry answers, otherwise build
// After the image map (image-map.ts) rewrote `image:` and the Dockerfile's bases.
import * as path from 'node:path';
import type { ComposeProject, ServiceSpec } from './compose-schema';
import { docker } from './client';
import { baseImages } from './dockerfile';
import { ImageMissingError, SandboxError } from './errors';
import { mapImage, type ImageMap } from './image-map';
import { buildService, buildTag, imageExists, tryPull, type BuildInput, type Progress } from './images';

export interface BaseStatus {
  /** the base after the map (what the build will use) */
  ref: string;
  /** the base as the Dockerfile resolves it, when the map changed it */
  mappedFrom?: string;
  present: boolean;
  /** absent bases only: whether a registry serves it */
  pullable?: boolean;
  detail?: string;
}

export interface ServiceImagePlan {
  service: string;
  /** `image:` after the map */
  image?: string;
  /** `image:` as written, when the map changed it */
  imageFrom?: string;
  imagePresent?: boolean;
  /** absent `image:` only: whether a registry serves it */
  pullable?: boolean;
  pullDetail?: string;
  pullPolicy?: string;
  build?: { dockerfile: string; tag: string; present: boolean; bases: BaseStatus[] };
  /** what provisioning does */
  action: 'use' | 'pull' | 'build';
  /** why it cannot be done on this host; undefined when it can */
  problem?: string;
}

/** The stack's images cannot all be had on this host: one error listing each (never retried). */
export class ImagePreflightError extends SandboxError {
  static override readonly nonRetryable = true;
  constructor(
    readonly task: string,
    readonly plans: ServiceImagePlan[],
  ) {
    const bad = plans.filter((p) => p.problem);
    super(
      `task ${task}: ${bad.length} image${bad.length > 1 ? 's are' : ' is'} not available on this host:\n` +
        bad.map((p) => `  ${p.service}: ${p.problem}`).join('\n') +
        '\n  (`saasbench tasks check` lists every image; `saasbench images standins` builds local stand-ins and prints the --image-map to use)',
    );
  }
}

const registryCache = new Map<string, { at: number; answer: Promise<string | null> }>();

/**
 * null when a registry serves `ref` (Docker's distribution endpoint: a manifest lookup, no
 * download), else why not. Answers are kept for a minute: a sweep asks for the same bases often.
 * SAASBENCH_NO_REGISTRY=1 answers "no" without asking.
 */
export function registryProblem(ref: string): Promise<string | null> {
  // hosts without a registry (and tests) can skip the lookups altogether
  if (process.env.SAASBENCH_NO_REGISTRY === '1') return Promise.resolve('registry lookups are off (SAASBENCH_NO_REGISTRY=1)');
  const hit = registryCache.get(ref);
  if (hit && Date.now() - hit.at < 60_000) return hit.answer;
  const answer = docker()
    .getImage(ref)
    .distribution({})
    .then(
      () => null,
      (err: Error) => err.message.replace(/^\(HTTP code \d+\)\s*[a-z ]*-\s*/i, '').split('\n')[0].trim().slice(0, 200),
    );
  registryCache.set(ref, { at: Date.now(), answer });
  return answer;
}

interface Planned {
  plan: ServiceImagePlan;
  prepared?: { tag: string; input: BuildInput };
}

async function planService(svc: ServiceSpec, taskId: string, map: ImageMap | undefined, registry: boolean): Promise<Planned> {
  const plan: ServiceImagePlan = { service: svc.name, action: 'use', ...(svc.pullPolicy ? { pullPolicy: svc.pullPolicy } : {}) };
  const canPull = async (ref: string): Promise<{ ok: boolean; detail?: string }> => {
    if (!registry) return { ok: false, detail: 'registry not asked' };
    const p = await registryProblem(ref);
    return p === null ? { ok: true } : { ok: false, detail: p };
  };
  if (svc.image) {
    const mapped = mapImage(svc.image, map);
    plan.image = mapped ?? svc.image;
    if (mapped) plan.imageFrom = svc.image;
    plan.imagePresent = await imageExists(plan.image);
  }
  const policy = svc.pullPolicy;
  const wantsImage = plan.image !== undefined && (!svc.build || (policy !== 'build' && (plan.imagePresent || policy !== 'never')));
  if (wantsImage && (plan.imagePresent && policy !== 'always')) return { plan: { ...plan, action: 'use' } };
  if (wantsImage) {
    const pull = await canPull(plan.image!);
    plan.pullable = pull.ok;
    if (!pull.ok) plan.pullDetail = pull.detail;
    if (pull.ok) return { plan: { ...plan, action: 'pull' } };
    if (plan.imagePresent) return { plan: { ...plan, action: 'use' } };
    if (!svc.build) return { plan: { ...plan, action: 'pull', problem: `${describe(plan)} is not present locally and cannot be pulled (${pull.detail})` } };
  }
  // build
  const prepared = await buildTag(svc, taskId, map);
  const present = await imageExists(prepared.tag);
  const bases: BaseStatus[] = [];
  if (!present) {
    for (const b of baseImages(prepared.input.dockerfileText, prepared.input.args)) {
      const s: BaseStatus = { ref: b.resolved, present: await imageExists(b.resolved) };
      const m = prepared.input.mapped.find((x) => x.line === b.line);
      if (m) s.mappedFrom = m.from;
      if (!s.present) {
        const pull = await canPull(s.ref);
        s.pullable = pull.ok;
        if (!pull.ok) s.detail = pull.detail;
      }
      bases.push(s);
    }
  }
  plan.build = { dockerfile: svc.build!.dockerfile, tag: prepared.tag, present, bases };
  plan.action = 'build';
  const missing = bases.filter((b) => !b.present && !b.pullable);
  if (missing.length) {
    const what = plan.image ? `${describe(plan)} is not present; building it from ${path.basename(svc.build!.dockerfile)} needs` : `building from ${path.basename(svc.build!.dockerfile)} needs`;
    plan.problem = `${what} ${missing.map((b) => `base image ${b.ref}${b.mappedFrom ? ` (mapped from ${b.mappedFrom})` : ''}`).join(' and ')}, which is not present and cannot be pulled (${missing[0].detail})`;
  }
  return { plan, prepared };
}

function describe(p: ServiceImagePlan): string {
  return p.imageFrom ? `image ${p.image} (mapped from ${p.imageFrom})` : `image ${p.image}`;
}

export interface PlanOptions {
  imageMap?: ImageMap;
  /** ask the registry about absent images (default true) */
  registry?: boolean;
}

/** The preflight: what each service needs, without building or pulling anything. */
export async function planImages(project: ComposeProject, taskId: string, o: PlanOptions = {}): Promise<ServiceImagePlan[]> {
  const out: ServiceImagePlan[] = [];
  for (const name of project.order) out.push((await planService(project.services[name], taskId, o.imageMap, o.registry ?? true)).plan);
  return out;
}

/** Throws ImagePreflightError when some image cannot be had on this host. */
export async function preflightImages(project: ComposeProject, taskId: string, o: PlanOptions = {}): Promise<ServiceImagePlan[]> {
  const plans = await planImages(project, taskId, o);
  if (plans.some((p) => p.problem)) throw new ImagePreflightError(taskId, plans);
  return plans;
}

/** Obtain every image the stack needs (use, pull or build as planned); service → image ref. */
export async function buildImages(project: ComposeProject, taskId: string, opts: { onProgress?: Progress; imageMap?: ImageMap } = {}): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const log = opts.onProgress;
  // Sequential on purpose: builds are CPU-bound and the workers have few cores.
  for (const name of project.order) {
    const svc = project.services[name];
    const { plan, prepared } = await planService(svc, taskId, opts.imageMap, true);
    if (plan.problem && plan.action === 'pull') throw new ImageMissingError(name, plan.image!, plan.pullDetail);
    if (plan.problem) throw new ImagePreflightError(taskId, [plan]);
    if (plan.imageFrom) log?.(`[${name}] image ${plan.imageFrom} → ${plan.image} (image map)`);
    if (plan.action === 'use') out[name] = plan.image!;
    else if (plan.action === 'pull') {
      const failed = await tryPull(name, plan.image!, log);
      if (!failed) out[name] = plan.image!;
      else if (svc.build) out[name] = await buildService(svc, taskId, log, opts.imageMap);
      else throw new ImageMissingError(name, plan.image!, failed);
    } else out[name] = await buildService(svc, taskId, log, opts.imageMap, prepared);
  }
  return out;
}
