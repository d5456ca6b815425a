// Deterministic names and labels. Everything a rollout owns is derivable from its rollout key,
// which is what makes retries idempotent and leftovers reapable.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SandboxInputError } from './errors';
import { zodIssueText } from '../zod-issues';

export const LABEL = {
  rollout: 'saasbench.rollout',
  task: 'saasbench.task',
  service: 'saasbench.service',
  managed: 'saasbench.managed',
  project: 'saasbench.project',
  /** Comma-separated service list, so a partial stack can be told from a complete one. */
  services: 'saasbench.services',
  /** Set on services that others await with service_completed_successfully (they exit). */
  oneshot: 'saasbench.oneshot',
} as const;

export const RolloutKey = z.string().regex(/^[a-zA-Z0-9_.-]+$/, 'rollout keys use [a-zA-Z0-9_.-]').min(1).max(250);

export function checkRolloutKey(key: string): string {
  const r = RolloutKey.safeParse(key);
  if (!r.success) throw new SandboxInputError(`invalid rollout key ${JSON.stringify(key)}: ${zodIssueText(r.error, { max: 1, root: 'key' })}`);
  return r.data;
}

function shortHash(s: string, n: number): string {
  return createHash('sha256').update(s).digest('hex').slice(0, n);
}

/** Lowercase docker-safe project name: <= 60 readable chars + "-" + 8 hex of the key. */
export function projectName(rolloutKey: string): string {
  let slug = rolloutKey.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/-{2,}/g, '-');
  slug = slug.replace(/^[^a-z0-9]+/, '').slice(0, 60).replace(/[-_]+$/, '');
  // The hash keeps keys that differ only in case or punctuation apart.
  return `${slug || 'rollout'}-${shortHash(rolloutKey, 8)}`;
}

export const networkName = (project: string): string => `${project}_net`;
export const containerName = (project: string, service: string): string => `${project}-${service}`;
export const volumeName = (project: string, volume: string): string => `${project}_${volume}`;

/** Repository component for image tags: lowercase [a-z0-9-]. */
export function imageSlug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
}

export function baseLabels(rolloutKey: string, taskId: string, extra?: Record<string, string>): Record<string, string> {
  return { ...extra, [LABEL.rollout]: rolloutKey, [LABEL.task]: taskId, [LABEL.managed]: 'true' };
}
