import type { RolloutInput, RolloutProgress } from '../model/rollout';

/** The Markdown shown as the workflow's "current details" in the Temporal UI. */
export function describeProgress(input: RolloutInput, p: RolloutProgress): string {
  const lines = [
    `**${input.taskId}** · agent \`${input.agent}\` · model \`${input.model}\` · repeat ${input.repeat} · sweep \`${input.sweep}\``,
    `phase: **${p.phase}**${p.host ? ` on host \`${p.host}\`` : ''}`,
  ];
  if (p.nodesTotal) {
    const counts = Object.entries(p.statusCounts).map(([s, n]) => `${s} ${n}`).join(', ');
    lines.push(`nodes: ${p.nodesDone}/${p.nodesTotal}${counts ? ` (${counts})` : ''}`);
  }
  if (p.nodesRunning.length) lines.push(`running: ${p.nodesRunning.slice(0, 8).join(', ')}${p.nodesRunning.length > 8 ? ', …' : ''}`);
  if (p.scorePct !== null) lines.push(`score: **${p.scorePct}**`);
  if (p.runDir) lines.push(`results: \`${p.runDir}\``);
  return lines.join('\n\n');
}
