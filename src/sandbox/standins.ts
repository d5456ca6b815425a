// Locally built stand-ins for the infrastructure images the published stacks pull from Docker Hub,
// built FROM saasbench/base:bookworm with Debian packages (images/standins/<name>/), for hosts
// without a registry. Each is built with a content-hash tag (rebuilt only when its folder changes)
// and tagged with a stable name the image map points at.
import * as path from 'node:path';
import type { ServiceSpec } from './compose-schema';
import { docker } from './client';
import { infra } from './errors';
import { imageExists, buildService, type Progress } from './images';
import type { ImageMap } from './image-map';

export interface Standin {
  name: string;
  /** the stable tag the image map points at */
  tag: string;
  /** the images it stands in for (image-map keys: `repo:*` = every tag) */
  replaces: string[];
  /** what differs from the original, for the docs and the command's output */
  caveat: string;
}

export const STANDINS: readonly Standin[] = [
  {
    name: 'postgres',
    tag: 'saasbench/standin-postgres:15',
    replaces: ['postgres:*'],
    caveat: 'PostgreSQL 15 (Debian bookworm) for every postgres tag; no pgvector/PostGIS extensions',
  },
  {
    name: 'redis',
    tag: 'saasbench/standin-redis:7',
    replaces: ['redis:*', 'valkey/valkey:*'],
    caveat: 'Redis 7.0 (Debian bookworm)',
  },
  {
    name: 'dev',
    tag: 'saasbench/standin-dev:bookworm',
    replaces: ['shadetocloak/saasbench-dev:base', 'saasbench-dev:base'],
    caveat: 'Debian bookworm with Go 1.19, Node.js 18 + npm, Python 3.11, build tools (the published base is Ubuntu with newer Go/Node)',
  },
];

/** Folder of a stand-in's Dockerfile (shipped with the repository, not compiled). */
export function standinDir(root: string, name: string): string {
  return path.join(root, 'images', 'standins', name);
}

/** The image map that points every replaced image at its stand-in. */
export function standinImageMap(names: readonly string[] = STANDINS.map((s) => s.name)): ImageMap {
  const map: ImageMap = {};
  for (const s of STANDINS.filter((x) => names.includes(x.name))) for (const r of s.replaces) map[r] = s.tag;
  return map;
}

/** Build (or confirm) one stand-in; returns its content tag. Needs saasbench/base:bookworm. */
export async function buildStandin(root: string, s: Standin, onProgress?: Progress): Promise<{ contentTag: string; built: boolean }> {
  const dir = standinDir(root, s.name);
  const svc: ServiceSpec = {
    name: s.name,
    build: { context: dir, dockerfile: path.join(dir, 'Dockerfile'), args: {} },
    environment: {},
    ports: [],
    mounts: [],
    dependsOn: {},
    tmpfs: {},
    stdinOpen: false,
    tty: false,
    init: true,
    dns: [],
    labels: {},
    extraHosts: [],
    ulimits: [],
    aliases: [],
  };
  let built = false;
  const contentTag = await buildService(svc, 'standin', (line) => {
    if (!line.endsWith('already built')) built = true;
    onProgress?.(line);
  });
  const [repo, tag] = [s.tag.slice(0, s.tag.lastIndexOf(':')), s.tag.slice(s.tag.lastIndexOf(':') + 1)];
  const current = (await imageExists(s.tag)) ? await docker().getImage(s.tag).inspect() : null;
  const wanted = await docker().getImage(contentTag).inspect();
  if (current?.Id !== wanted.Id) {
    await docker()
      .getImage(contentTag)
      .tag({ repo, tag })
      .catch((err: unknown) => {
        throw infra(`tagging ${contentTag} as ${s.tag}`, err);
      });
  }
  return { contentTag, built };
}
