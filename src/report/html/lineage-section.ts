/**
 * The rollout page's "Snapshots, moves and forks" section: what report.json says of the rollout's
 * life beyond one host and one run (src/model/snapshot.ts): the host moves after a lost host, the
 * rollout it was forked from and the forks made of it, the snapshots taken during the agent run,
 * and the rate governor's waits. Nothing at all for a rollout that had none of these.
 */
import { basename, dirname, resolve } from 'node:path';
import type { HostMove, ParentLink, SnapshotMeta } from '../../model/snapshot';
import { esc, fmtMs, table } from './page';

/** A fork as its parent's report.json lists it (src/snapshots/fork-links.ts ChildLink). */
export interface ChildRef {
  workflowId: string;
  rolloutKey: string;
  agent?: string;
  model?: string;
  snapshot?: string;
  runDir?: string;
}

export interface LineageFields {
  moves?: HostMove[];
  parent?: ParentLink | null;
  children?: ChildRef[];
  agentRun?: { snapshots?: SnapshotMeta[]; governor?: { waits: number; waitSeconds: number } };
}

function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let x = n / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toFixed(x >= 10 ? 0 : 1)} ${units[i]}`;
}

const secs = (s: number) => fmtMs(Math.round(s * 1000));

/**
 * Another rollout, as a link to its report.html when its run folder is a sibling of this one (the
 * usual runs/<rollout>/ layout: the link survives copying the runs folder elsewhere), else by key.
 */
export function rolloutRef(runDir: string, other: { workflowId: string; rolloutKey: string; runDir?: string }): string {
  const key = `<code>${esc(other.rolloutKey)}</code> <span class="small">workflow ${esc(other.workflowId)}</span>`;
  if (!other.runDir) return key;
  const here = resolve(runDir);
  const there = resolve(other.runDir);
  if (there === here || dirname(there) !== dirname(here)) return key;
  const href = `../${encodeURIComponent(basename(there))}/report.html`;
  return `<a href="${esc(href)}">${esc(other.rolloutKey)}</a> <span class="small">workflow ${esc(other.workflowId)}</span>`;
}

/** The section's HTML ('' when the rollout has no moves, fork links, snapshots or governor waits). */
export function lineageSection(runDir: string, r: LineageFields): string {
  const moves = r.moves ?? [];
  const children = r.children ?? [];
  const snaps = r.agentRun?.snapshots ?? [];
  const gov = r.agentRun?.governor;
  if (!moves.length && !r.parent && !children.length && !snaps.length && !(gov && gov.waits > 0)) return '';
  const out: string[] = ['<h2 id="lineage">Snapshots, moves and forks</h2>', '<dl class="meta">'];
  if (r.parent) out.push(`<dt>forked from</dt><dd>${rolloutRef(runDir, r.parent)} at snapshot <code>${esc(r.parent.snapshot)}</code></dd>`);
  if (children.length) {
    const items = children.map((c) => `<li>${rolloutRef(runDir, c)}${c.agent ? ` · ${esc(c.agent)}` : ''}${c.model ? ` · ${esc(c.model)}` : ''}${c.snapshot ? ` from <code>${esc(c.snapshot)}</code>` : ''}</li>`);
    out.push(`<dt>forks (${children.length})</dt><dd><ul>${items.join('')}</ul></dd>`);
  }
  if (gov) out.push(`<dt>rate governor</dt><dd>${gov.waits} request(s) waited, ${esc(secs(gov.waitSeconds))} in all (not counted as agent time)</dd>`);
  out.push('</dl>');
  if (moves.length) {
    const rows = moves.map((m) => [
      `<code>${esc(m.fromHost)}</code> → <code>${esc(m.toHost)}</code>`,
      m.snapshot ? `<code>${esc(m.snapshot)}</code>` : '<span class="small">none: the agent started over</span>',
      esc(m.reason),
      `<td class="num">${esc(secs(m.secondsLost))}</td>`,
      `<td class="num">${esc(secs(m.downSeconds))}</td>`,
    ]);
    out.push(`<h3>Host moves (${moves.length})</h3>`, table(['hosts', 'restored snapshot', 'reason', 'agent work lost', 'down'], rows));
  }
  if (snaps.length) {
    const rows = snaps.map((s) => {
      const total = Object.values(s.bytes).reduce((a, b) => a + b, 0);
      const parts = Object.entries(s.bytes).map(([k, v]) => `${k} ${fmtBytes(v)}`).join(', ');
      return [
        `<code>${esc(s.id)}</code>${s.final ? ' <span class="small">final</span>' : ''}${s.deleted ? ' <span class="small">deleted (SAASBENCH_SNAPSHOT_KEEP)</span>' : ''}`,
        esc(new Date(s.takenAt).toISOString().replace('.000Z', 'Z')),
        `<code>${esc(s.host)}</code>`,
        `<td class="num">${esc(secs(s.agentSeconds))}</td>`,
        `<td class="num">${esc(fmtBytes(total))}</td>`,
        `<span class="small">${esc(parts)}</span>`,
      ];
    });
    out.push(`<h3>Snapshots (${snaps.length})</h3>`, table(['snapshot', 'taken', 'host', 'agent time', 'size', 'parts'], rows));
  }
  return out.join('\n');
}
