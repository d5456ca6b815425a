import type { RolloutResult } from '../model/rollout';
import { mdTable } from './table';
import { SCORE_HEADER, scoreSections } from './score-rows';
import { formatDuration } from '../model/duration';
import { fmtUsd } from '../model/cost';

export function renderSummaryMarkdown(r: RolloutResult): string {
  const s = r.score;
  const out = [
    `# ${r.taskId} · ${r.agent} · ${r.model} · repeat ${r.repeat}`,
    '',
    `- workflow: \`${r.workflowId}\``,
    `- host: \`${r.host}\``,
    `- agent: ${r.agentRun.exitReason} — ${r.agentRun.message}`,
    `- **task score ${s.overall.pct ?? '–'}** (${s.overall.score}/${s.overall.maxScore}); non-LLM subscore ${s.nonLlm.pct ?? '–'}`,
    `- judge maxScore dropped (SKIPPED_LLM): ${s.judgeDroppedMaxScore}`,
    `- timings: provision ${formatDuration(r.timings.provisionMs)}, agent ${formatDuration(r.timings.agentMs)}, evaluation ${formatDuration(r.timings.evaluationMs)}`,
  ];
  const g = r.agentRun.gateway;
  if (g) out.push(`- model cost (gateway-metered): ${fmtUsd(g.costUsd)}${g.costReason ? ` (${g.costReason})` : ''} · ${g.usage.requests} answers, input ${g.usage.input} (cached ${g.usage.cachedInput}), output ${g.usage.output} (reasoning ${g.usage.reasoning})`);
  for (const sec of scoreSections(s)) out.push('', `## ${sec.title}`, '', mdTable(SCORE_HEADER, sec.rows));
  const notPassed = r.outcomes.filter((o) => o.status !== 'PASSED');
  if (notPassed.length) {
    out.push('', '## Nodes not passed', '', mdTable(['node', 'status', 'score', 'max', 'message'], notPassed.map((o) => [o.nodeId, o.status, o.score, o.maxScore, o.message.slice(0, 160)])));
  }
  return out.join('\n') + '\n';
}
