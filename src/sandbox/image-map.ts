// Image maps (`--image-map from=to`, sweep `imageMap:`, SAASBENCH_IMAGE_MAP): rewrite the image
// references of a stack — `image:` values, a Dockerfile's FROM, image-valued build args — so a host
// without a registry can run a stack with locally built stand-ins (docs/operations.md).
import { SaasbenchError } from '../errors';

/** from → to, as written by the user (keys may end in `:*`: any tag of that repository). */
export type ImageMap = Record<string, string>;

export class ImageMapError extends SaasbenchError {
  static override readonly nonRetryable = true;
  override name = 'ImageMapError';
}

// docker's reference grammar, loosely: [host[:port]/]path[:tag][@sha256:…], lowercase path
const REF = /^(?:[a-zA-Z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

export function isImageRef(s: string): boolean {
  return REF.test(s);
}

interface Parsed {
  /** registry + path, with docker.io/library/ made explicit */
  repo: string;
  /** tag, `latest` when neither tag nor digest is given */
  tag: string | null;
  digest: string | null;
}

function parseRef(ref: string): Parsed {
  let rest = ref;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const parts = rest.split('/');
  const hasHost = parts.length > 1 && (/[.:]/.test(parts[0]) || parts[0] === 'localhost');
  let repo = hasHost ? rest : `docker.io/${rest}`;
  if (repo.startsWith('docker.io/') && repo.split('/').length === 2) repo = `docker.io/library/${repo.slice('docker.io/'.length)}`;
  if (tag === null && digest === null) tag = 'latest';
  return { repo, tag, digest };
}

/** The canonical form two spellings of one image share (`postgres` = `docker.io/library/postgres:latest`). */
export function canonicalRef(ref: string): string {
  const p = parseRef(ref);
  return `${p.repo}${p.tag !== null ? `:${p.tag}` : ''}${p.digest ? `@${p.digest}` : ''}`;
}

/**
 * Parse `from=to` entries (flags, a sweep file, SAASBENCH_IMAGE_MAP). Throws ImageMapError naming
 * the entry; `where` says which source (for the message).
 */
export function parseImageMap(entries: readonly string[], where: string): ImageMap {
  const out: ImageMap = {};
  for (const e of entries) {
    const eq = e.indexOf('=');
    if (eq < 0) throw new ImageMapError(`${where}: "${e}" is not from=to`);
    const from = e.slice(0, eq).trim();
    const to = e.slice(eq + 1).trim();
    addEntry(out, from, to, where);
  }
  return out;
}

/** Validate a map given as an object (sweep files). */
export function checkImageMap(map: Record<string, unknown>, where: string): ImageMap {
  const out: ImageMap = {};
  for (const [from, to] of Object.entries(map)) {
    if (typeof to !== 'string') throw new ImageMapError(`${where}: "${from}" must map to an image reference string`);
    addEntry(out, from, to, where);
  }
  return out;
}

function addEntry(out: ImageMap, from: string, to: string, where: string): void {
  const wild = from.endsWith(':*');
  if (!isImageRef(wild ? from.slice(0, -2) : from)) throw new ImageMapError(`${where}: "${from}" is not an image reference (add ":*" for every tag of a repository)`);
  if (!isImageRef(to)) throw new ImageMapError(`${where}: "${to}" is not an image reference`);
  if (from in out && out[from] !== to) throw new ImageMapError(`${where}: "${from}" is mapped twice (to ${out[from]} and ${to})`);
  out[from] = to;
}

/** SAASBENCH_IMAGE_MAP: `from=to` entries separated by commas, spaces or newlines. */
export function imageMapFromEnv(env: Record<string, string | undefined> = process.env): ImageMap {
  const raw = env.SAASBENCH_IMAGE_MAP?.trim();
  if (!raw) return {};
  return parseImageMap(raw.split(/[\s,]+/).filter(Boolean), 'SAASBENCH_IMAGE_MAP');
}

/**
 * The reference `ref` maps to, or undefined. An exact entry (compared in canonical form) wins over
 * a `repo:*` entry; a mapped reference is not mapped again.
 */
export function mapImage(ref: string, map: ImageMap | undefined): string | undefined {
  if (!map) return undefined;
  const entries = Object.entries(map);
  if (entries.length === 0 || !isImageRef(ref)) return undefined;
  const c = canonicalRef(ref);
  for (const [from, to] of entries) if (!from.endsWith(':*') && canonicalRef(from) === c) return to;
  const repo = parseRef(ref).repo;
  for (const [from, to] of entries) if (from.endsWith(':*') && parseRef(from.slice(0, -2)).repo === repo) return to;
  return undefined;
}

/** `from=to` flags, in a stable order (for printing and the lock). */
export function imageMapFlags(map: ImageMap): string[] {
  return Object.entries(map)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([f, t]) => `--image-map ${f}=${t}`);
}
