// Image primitives: presence, one pull attempt, content-addressed builds (a tag that already exists
// is reused) with the image map applied to the Dockerfile's bases. What to do for each service of a
// stack (use, pull or build) is decided in image-plan.ts.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServiceSpec } from './compose-schema';
import { docker } from './client';
import { SandboxInfraError, infra, isNotFound } from './errors';
import { LABEL, imageSlug } from './naming';
import { dockerignore, packEntries, walkDir, type DirEntry } from './tar';
import { mapDockerfile, type MappedDockerfile } from './dockerfile';
import type { ImageMap } from './image-map';

export type Progress = ((line: string) => void) | undefined;

// Concurrent rollouts of one task ask for the same tag; build it once per process.
const inFlight = new Map<string, Promise<void>>();

/** The engine's id (sha256:…) of an image reference; null when the engine does not have it. */
export async function imageId(ref: string): Promise<string | null> {
  return docker()
    .getImage(ref)
    .inspect()
    .then(
      (i) => i.Id,
      () => null,
    );
}

export async function imageExists(ref: string): Promise<boolean> {
  try {
    await docker().getImage(ref).inspect();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw infra(`inspecting image ${ref}`, err);
  }
}

/** One pull attempt; the error's first line when it fails (no registry, unknown image). */
export async function tryPull(service: string, ref: string, onProgress: Progress): Promise<string | null> {
  onProgress?.(`[${service}] image ${ref} not found locally; trying docker pull once`);
  try {
    const stream = await docker().pull(ref);
    await follow(stream, onProgress, service);
  } catch (err) {
    return err instanceof Error ? firstLine(err.message) : String(err);
  }
  return (await imageExists(ref)) ? null : 'pull reported success but the image is absent';
}

export interface BuildInput {
  entries: DirEntry[];
  /** build args after the image map */
  args: Record<string, string>;
  /** base images rewritten by the image map */
  mapped: MappedDockerfile['mapped'];
  /** the Dockerfile as built (after the image map) */
  dockerfileText: string;
  /** Dockerfile name as the daemon should see it inside the context. */
  dockerfileName: string;
  /** Set when the Dockerfile lives outside the context and must be injected. */
  injectedDockerfile?: Buffer;
  hash: string;
}

/**
 * The tag for a build service: content hash of context files, Dockerfile and build args — after the
 * image map rewrote the Dockerfile's bases, so a different stand-in gives a different tag.
 */
export async function buildTag(svc: ServiceSpec, taskId: string, imageMap?: ImageMap): Promise<{ tag: string; input: BuildInput }> {
  const input = await prepareBuild(svc, imageMap);
  return { tag: `saasbench/${imageSlug(taskId)}-${imageSlug(svc.name)}:${input.hash.slice(0, 12)}`, input };
}

async function prepareBuild(svc: ServiceSpec, imageMap: ImageMap | undefined): Promise<BuildInput> {
  const build = svc.build!;
  const { context, dockerfile } = build;
  if (!fs.existsSync(context) || !fs.statSync(context).isDirectory()) {
    throw new SandboxInfraError(`service "${svc.name}": build context ${context} is not a directory`);
  }
  if (!fs.existsSync(dockerfile)) throw new SandboxInfraError(`service "${svc.name}": Dockerfile ${dockerfile} does not exist`);
  const ignoreFile = path.join(context, '.dockerignore');
  const rules = fs.existsSync(ignoreFile) ? dockerignore(fs.readFileSync(ignoreFile, 'utf8')) : undefined;
  const relDockerfile = path.relative(context, dockerfile).split(path.sep).join('/');
  const inside = !relDockerfile.startsWith('..') && !path.isAbsolute(relDockerfile);
  // Docker always sends the Dockerfile and .dockerignore, even when ignored.
  const ignore = (rel: string, isDir: boolean) =>
    rules ? rules.ignore(rel, isDir) && rel !== relDockerfile && rel !== '.dockerignore' : false;
  const entries = await walkDir(context, ignore, rules?.hasNegation ? () => true : undefined);

  const h = createHash('sha256');
  for (const e of entries) {
    // Mode bits beyond "executable" vary with umask between checkouts; they should not bust the cache.
    h.update(`${e.type}\0${e.rel}\0${e.mode & 0o111 ? 'x' : '-'}\0`);
    if (e.type === 'file') h.update(await fs.promises.readFile(e.abs));
    if (e.type === 'symlink') h.update(e.linkTarget ?? '');
    h.update('\0');
  }
  const original = await fs.promises.readFile(dockerfile, 'utf8');
  const m = mapDockerfile(original, build.args, imageMap);
  const dfContent = Buffer.from(m.text);
  // a Dockerfile rewritten by the image map is sent beside the context's own, never over it
  const inject = !inside || m.text !== original;
  const dockerfileName = inject ? '.saasbench.Dockerfile' : relDockerfile;
  h.update(`dockerfile\0${dockerfileName}\0`).update(dfContent);
  h.update(`\0args\0${JSON.stringify(Object.entries(m.args).sort(([a], [b]) => a.localeCompare(b)))}`);
  return { entries, args: m.args, mapped: m.mapped, dockerfileText: m.text, dockerfileName, injectedDockerfile: inject ? dfContent : undefined, hash: h.digest('hex') };
}

/** Build a service's image (content-hash tag, reused when it exists). */
export async function buildService(svc: ServiceSpec, taskId: string, onProgress: Progress, imageMap?: ImageMap, prepared?: { tag: string; input: BuildInput }): Promise<string> {
  const { tag, input } = prepared ?? (await buildTag(svc, taskId, imageMap));
  if (await imageExists(tag)) {
    onProgress?.(`[${svc.name}] ${tag} already built`);
    return tag;
  }
  for (const m of input.mapped) onProgress?.(`[${svc.name}] FROM ${m.from} → ${m.to} (image map, ${m.via === 'arg' ? 'build arg' : 'Dockerfile line ' + m.line})`);
  let p = inFlight.get(tag);
  if (!p) {
    p = runBuild(svc, taskId, tag, input, onProgress).finally(() => inFlight.delete(tag));
    inFlight.set(tag, p);
  }
  await p;
  return tag;
}

async function runBuild(svc: ServiceSpec, taskId: string, tag: string, input: BuildInput, onProgress: Progress): Promise<void> {
  onProgress?.(`[${svc.name}] building ${tag}`);
  const extra = input.injectedDockerfile ? [{ name: input.dockerfileName, content: input.injectedDockerfile }] : [];
  const tarStream = packEntries(input.entries, { extra });
  try {
    const stream = await docker().buildImage(tarStream, {
      t: tag,
      dockerfile: input.dockerfileName,
      buildargs: input.args,
      // Host networking lets RUN steps reach package mirrors without relying on the bridge NAT.
      networkmode: 'host',
      rm: true,
      forcerm: true,
      labels: { [LABEL.managed]: 'true', [LABEL.task]: taskId },
    });
    await follow(stream, onProgress, svc.name);
  } catch (err) {
    throw infra(`building image for service "${svc.name}" (${tag})`, err);
  }
  if (!(await imageExists(tag))) throw new SandboxInfraError(`building ${tag} finished but the image is absent`);
}

interface ProgressEvent {
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Drains a build/pull progress stream, forwarding lines; a reported error rejects with the tail. */
function follow(stream: NodeJS.ReadableStream, onProgress: Progress, service: string): Promise<void> {
  const tail: string[] = [];
  return new Promise((resolve, reject) => {
    docker().modem.followProgress(
      stream,
      (err: Error | null, events: ProgressEvent[]) => {
        const failed = events?.find((e) => e.error || e.errorDetail);
        if (err || failed) {
          const msg = err?.message ?? failed?.errorDetail?.message ?? failed?.error ?? 'unknown error';
          reject(new SandboxInfraError(`[${service}] ${msg}\n--- last output ---\n${tail.join('\n')}`));
        } else resolve();
      },
      (e: ProgressEvent) => {
        const line = (e.stream ?? [e.status, e.progress].filter(Boolean).join(' ')).replace(/\n$/, '');
        if (!line) return;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        onProgress?.(`[${service}] ${line}`);
      },
    );
  });
}

function firstLine(s: string): string {
  return s.split('\n')[0].slice(0, 300);
}
