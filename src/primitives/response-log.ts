import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { LastResponse } from './types';

/**
 * A node's recorded responses on disk, so a later node's judge can read what its prerequisites saw
 * (P17 `prereq_responses`). Both evaluators give node X the artifacts folder `<artifacts>/<X>`, so a
 * prerequisite's log is a sibling folder's `responses.json`. Bodies are cut: this is evidence for a
 * judge, not a replay log.
 */
export const RESPONSE_LOG = 'responses.json';
const MAX_ENTRIES = 100;
const MAX_BODY_CHARS = 20_000;

export interface LoggedResponse {
  method: string;
  path: string;
  status: number;
  /** the body as text (JSON bodies pretty-printed), cut to 20,000 characters */
  body: string;
}

export function bodyText(body: unknown): string {
  if (body === undefined || body === null) return '';
  return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

export function toLogged(r: LastResponse): LoggedResponse {
  return { method: r.method, path: r.path, status: r.status, body: bodyText(r.body).slice(0, MAX_BODY_CHARS) };
}

/** Write the chain's responses into its artifacts folder (nothing when there are none). */
export function writeResponseLog(artifactsDir: string, responses: readonly LastResponse[] | undefined): void {
  if (!responses?.length) return;
  mkdirSync(artifactsDir, { recursive: true });
  writeFileSync(join(artifactsDir, RESPONSE_LOG), JSON.stringify(responses.slice(-MAX_ENTRIES).map(toLogged)));
}

/** The responses node `nodeId` recorded in this run, read from the sibling of this node's artifacts folder; null when it wrote none. */
export function readPrereqResponses(artifactsDir: string, nodeId: string): LoggedResponse[] | null {
  if (basename(nodeId) !== nodeId || nodeId === '..' || nodeId === '.') return null;
  const file = join(dirname(artifactsDir), nodeId, RESPONSE_LOG);
  if (!existsSync(file)) return null;
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(v) ? (v as LoggedResponse[]) : null;
  } catch {
    return null;
  }
}
