import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeAtomic, writeJson } from '../../runs/files';
import type { TaxonomyThresholds } from '../../scoring/taxonomy';
import type { SweepResult } from '../../model/sweep';
import { groupsCsv, leaderboardCsv, rolloutsCsv, rolloutsJsonl, sweepMarkdown } from '../sweep-export';
import { renderRolloutHtmlOffThread, renderSweepHtmlOffThread } from './render-thread';

/** Write report.html into a run folder (next to report.json). Returns the file, or null without report.json. */
export async function writeRolloutHtml(runDir: string, th?: TaxonomyThresholds, opts: { ifStale?: boolean } = {}): Promise<string | null> {
  const json = join(runDir, 'report.json');
  if (!existsSync(json)) return null;
  const file = join(runDir, 'report.html');
  // a sweep re-writes its report often (every re-submission); a page newer than its data is kept
  if (opts.ifStale && existsSync(file) && statSync(file).mtimeMs >= statSync(json).mtimeMs) return file;
  writeAtomic(file, await renderRolloutHtmlOffThread(runDir, th));
  return file;
}

export const SWEEP_FILES = ['sweep.json', 'summary.md', 'leaderboard.csv', 'groups.csv', 'rollouts.csv', 'rollouts.jsonl', 'report.html'];

/**
 * Everything about a sweep, into `dir` (runs/sweeps/<name>/): the result as JSON, a Markdown
 * summary, CSV and JSONL exports, and the HTML report. Each rollout whose run folder is on this
 * host (or a shared filesystem) also gets its own report.html, linked from the sweep page.
 */
export async function writeSweepReport(r: SweepResult, dir: string): Promise<{ dir: string; files: string[]; rolloutPages: number }> {
  mkdirSync(dir, { recursive: true });
  const links: Record<string, string> = {};
  for (const x of r.rollouts) {
    if (!x.runDir || x.state !== 'completed') continue;
    try {
      const page = await writeRolloutHtml(x.runDir, r.input.taxonomy, { ifStale: true });
      if (page) links[x.workflowId] = relative(dir, page).split('\\').join('/');
    } catch {
      // a run folder that cannot be read (another host, half-deleted) just gets no link
    }
  }
  writeJson(join(dir, 'sweep.json'), r);
  writeAtomic(join(dir, 'summary.md'), sweepMarkdown(r));
  writeAtomic(join(dir, 'leaderboard.csv'), leaderboardCsv(r.benchmark, r.rollouts));
  writeAtomic(join(dir, 'groups.csv'), groupsCsv(r.benchmark));
  writeAtomic(join(dir, 'rollouts.csv'), rolloutsCsv(r.rollouts));
  writeAtomic(join(dir, 'rollouts.jsonl'), rolloutsJsonl(r.rollouts));
  writeAtomic(join(dir, 'report.html'), await renderSweepHtmlOffThread(r, links));
  return { dir, files: SWEEP_FILES.map((f) => join(dir, f)), rolloutPages: Object.keys(links).length };
}
