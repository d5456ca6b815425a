import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonIfExists, writeJson } from '../runs/files';
import type { ParentLink } from '../model/snapshot';

export interface ChildLink {
  workflowId: string;
  rolloutKey: string;
  agent: string;
  model: string;
  snapshot: string;
  runDir: string;
}

/** A fork adds itself to its parent's report.json `children` (idempotent); false when the parent's report is not here. */
export function linkChildToParent(parent: ParentLink, child: ChildLink): boolean {
  const file = parent.runDir ? join(parent.runDir, 'report.json') : null;
  if (!file || !existsSync(file)) return false;
  const report = readJsonIfExists<Record<string, unknown>>(file) ?? {};
  const children = ((report.children as ChildLink[] | undefined) ?? []).filter((c) => c.workflowId !== child.workflowId);
  writeJson(file, { ...report, children: [...children, child] });
  return true;
}
