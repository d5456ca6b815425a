// Image preparation: content-addressed builds for `build:` services (a tag that already exists
// is reused), and presence checks (plus one pull attempt) for `image:` services.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ComposeProject, ServiceSpec } from './compose-schema';
import { docker } from './client';
import { ImageMissingError, SandboxInfraError, infra, isNotFound } from './errors';
import { LABEL, imageSlug } from './naming';
import { dockerignore, packEntries, walkDir, type DirEntry } from './tar';

type Progress = ((line: string) => void) | undefined;

// Concurrent rollouts of one task ask for the same tag; build it once per process.
const inFlight = new Map<string, Promise<void>>();

export async function buildImages(
  project: ComposeProject,
  taskId: string,
  opts: { onProgress?: (line: string) => void } = {},
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  // Sequential on purpose: builds are CPU-bound and the workers have few cores.
  for (const name of project.order) {
    const svc = project.services[name];
    out[name] = svc.build ? await buildService(svc, taskId, opts.onProgress) : await ensureImage(name, svc.image!, opts.onProgress);
  }
  return out;
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

async function ensureImage(service: string, ref: string, onProgress: Progress): Promise<string> {
  if (await imageExists(ref)) return ref;
  onProgress?.(`[${service}] image ${ref} not found locally; trying docker pull once`);
  try {
    const stream = await docker().pull(ref);
    await follow(stream, onProgress, service);
  } catch (err) {
    throw new ImageMissingError(service, ref, err instanceof Error ? firstLine(err.message) : String(err));
  }
  if (!(await imageExists(ref))) throw new ImageMissingError(service, ref, 'pull reported success but the image is absent');
  return ref;
}

interface BuildInput {
  entries: DirEntry[];
  /** Dockerfile name as the daemon should see it inside the context. */
  dockerfileName: string;
  /** Set when the Dockerfile lives outside the context and must be injected. */
  injectedDockerfile?: Buffer;
  hash: string;
}

/** The tag for a build service: content hash of context files, Dockerfile and build args. */
export async function buildTag(svc: ServiceSpec, taskId: string): Promise<{ tag: string; input: BuildInput }> {
  const input = await prepareBuild(svc);
  return { tag: `saasbench/${imageSlug(taskId)}-${imageSlug(svc.name)}:${input.hash.slice(0, 12)}`, input };
}

async function prepareBuild(svc: ServiceSpec): Promise<BuildInput> {
  const build = svc.build!;
  const { context, dockerfile, args } = build;
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
  const dfContent = await fs.promises.readFile(dockerfile);
  const dockerfileName = inside ? relDockerfile : '.saasbench.Dockerfile';
  h.update(`dockerfile\0${dockerfileName}\0`).update(dfContent);
  h.update(`\0args\0${JSON.stringify(Object.entries(args).sort(([a], [b]) => a.localeCompare(b)))}`);
  return { entries, dockerfileName, injectedDockerfile: inside ? undefined : dfContent, hash: h.digest('hex') };
}

async function buildService(svc: ServiceSpec, taskId: string, onProgress: Progress): Promise<string> {
  const { tag, input } = await buildTag(svc, taskId);
  if (await imageExists(tag)) {
    onProgress?.(`[${svc.name}] ${tag} already built`);
    return tag;
  }
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
      buildargs: svc.build!.args,
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
