import { SCORE_HEADER, scoreSections } from '../report/score-rows';
import { textTable } from '../report/table';
import type { RolloutResult } from '../model/rollout';

export function printRolloutResult(r: RolloutResult, out: NodeJS.WritableStream = process.stdout): void {
  const s = r.score;
  const w = (l = '') => out.write(`${l}\n`);
  w();
  w(`${r.taskId} · agent ${r.agent} · model ${r.model} · repeat ${r.repeat}`);
  w(`agent: ${r.agentRun.exitReason} — ${r.agentRun.message}`);
  for (const sec of scoreSections(s)) {
    w();
    w(sec.title);
    w(textTable(SCORE_HEADER, sec.rows));
  }
  w();
  w(`Task score S_t: ${s.overall.pct ?? '–'}   non-LLM subscore: ${s.nonLlm.pct ?? '–'}`);
  if (s.judgeDroppedMaxScore > 0) {
    const n = s.statusCounts.SKIPPED_LLM ?? 0;
    w(`LLM-judge nodes SKIPPED_LLM: ${n} (maxScore ${s.judgeDroppedMaxScore} left out of the denominator)`);
  }
  w(`results: ${r.runDir} (report.html, report.json, node_results.json)`);
}
