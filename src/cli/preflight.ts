// The image preflight as the CLI runs it (`tasks check`, `run`, `sweep`): the image map from
// flags and SAASBENCH_IMAGE_MAP, the per-service plan, and how both are printed.
import { basename } from 'node:path';
import { InvalidInputError } from '../errors';
import {
  ImageMapError,
  engineAnswers,
  imageMapFromEnv,
  mapImage,
  parseImageMap,
  preflightImages,
  type ImageMap,
  type ServiceImagePlan,
} from '../sandbox';
import { STANDINS, standinImageMap } from '../sandbox/standins';
import { loadTaskCompose } from '../tasks/task-compose';
import type { Task } from '../model/task';

/** commander collector for a repeatable `--image-map from=to` */
export function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

/** The `--image-map` flags as a map; a bad entry is a command-line error naming the flag. */
export function imageMapFlags(flags: readonly string[] | undefined): ImageMap {
  try {
    return parseImageMap(flags ?? [], '--image-map');
  } catch (err) {
    if (err instanceof ImageMapError) throw InvalidInputError.one('command line', '--image-map', err.message.replace(/^--image-map: /, ''));
    throw err;
  }
}

/** SAASBENCH_IMAGE_MAP of this process (what an in-process worker applies), as an input error when malformed. */
export function envImageMap(): ImageMap {
  try {
    return imageMapFromEnv();
  } catch (err) {
    if (err instanceof ImageMapError) throw InvalidInputError.one('environment', 'SAASBENCH_IMAGE_MAP', err.message.replace(/^SAASBENCH_IMAGE_MAP: /, ''));
    throw err;
  }
}

export async function dockerAnswers(): Promise<boolean> {
  return engineAnswers();
}

/** Plan every image of the task's stack; throws ImagePreflightError (one message, every image named) when some cannot be had. */
export async function preflightTask(task: Task, imageMap: ImageMap): Promise<ServiceImagePlan[]> {
  return preflightImages(loadTaskCompose(task), task.id, { imageMap });
}

/** Human lines for one service's plan (`tasks check`). */
export function describePlan(p: ServiceImagePlan): string[] {
  const lines: string[] = [];
  const img = p.image ? `${p.image}${p.imageFrom ? ` (mapped from ${p.imageFrom})` : ''}` : '(no image: build only)';
  let status: string;
  if (p.action === 'use') status = 'present';
  else if (p.action === 'pull') status = p.problem ? `absent, cannot be pulled: ${p.pullDetail}` : 'absent, a registry serves it: pulled at provision';
  else {
    const b = p.build!;
    const why = p.image ? `absent${p.pullable === false ? ', not pullable' : ''}; ` : '';
    status = `${why}built from ${basename(b.dockerfile)} as ${b.tag}${b.present ? ' (already built)' : ''}`;
  }
  lines.push(`${p.service}: ${img}`, `    ${status}${p.pullPolicy ? ` [pull_policy ${p.pullPolicy}]` : ''}`);
  for (const base of p.build?.bases ?? []) {
    const st = base.present ? 'present' : base.pullable ? 'absent, pullable' : `absent, cannot be pulled (${base.detail})`;
    lines.push(`    base image ${base.ref}${base.mappedFrom ? ` (mapped from ${base.mappedFrom})` : ''}: ${st}`);
  }
  if (p.problem) lines.push(`    PROBLEM: ${p.problem}`);
  return lines;
}

/** The stand-ins that would replace the images the plans cannot have, as `--image-map` flags. */
export function standinHint(plans: ServiceImagePlan[]): string | null {
  const all = standinImageMap();
  const missing = plans.flatMap((p) => [...(p.problem && p.action === 'pull' && p.image ? [p.imageFrom ?? p.image] : []), ...(p.build?.bases ?? []).filter((b) => !b.present && !b.pullable).map((b) => b.mappedFrom ?? b.ref)]);
  const flags = new Set<string>();
  const names = new Set<string>();
  for (const ref of missing) {
    const to = mapImage(ref, all);
    if (!to) continue;
    const from = Object.keys(all).find((k) => mapImage(ref, { [k]: to }) === to)!;
    flags.add(`--image-map '${from}=${to}'`);
    names.add(STANDINS.find((s) => s.tag === to)!.name);
  }
  if (!flags.size) return null;
  return `saasbench images standins ${[...names].join(' ')}   # then add: ${[...flags].join(' ')}`;
}
