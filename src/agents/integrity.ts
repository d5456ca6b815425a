/**
 * The transcript audit (anti-cheat). Looks at every tool call of the normalized trajectory (the
 * command, file path and full input) and at every raw line of the agent's event stream for:
 *  - evaluator access: the task's DAG file and evaluation folder (by host path, by its path
 *    relative to the task folder, and by name: dag.json / dag_smoke.json, scoring_config.json,
 *    rubric files), and the published layout's `/check/<task>_e/evaluate` → verdict `voided`;
 *  - the published layout's non-evaluation check folder `/check/<task>/` → `warning`;
 *  - cloning or downloading a codebase the task forbids (task.yaml `forbiddenSources`: repository
 *    slugs or URLs) with git/curl/wget/gh/svn/pip/npm or the WebFetch tool → `flagged`.
 * Evaluation never enters the container, so such a read cannot succeed; the attempt is what counts.
 * Matching is on text, so the verdict keeps up to 5 samples for a human to check.
 */
import { dirname, relative } from 'node:path';
import type { Task } from '../tasks/task';
import type { IntegrityHit, IntegrityReport } from '../workflows/contracts';
import type { Trajectory } from './trajectory/types';

interface Rule {
  kind: IntegrityHit['kind'];
  rule: string;
  test: (text: string) => boolean;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const FETCH = /\b(git\s+(clone|fetch|pull|submodule|remote\s+add)|gh\s+repo\s+clone|curl|wget|svn\s+(checkout|export|co)|pip3?\s+(download|install)|npm\s+(pack|install|i)|yarn\s+add|go\s+get|composer\s+(require|create-project)|degit|hub\s+clone)\b/i;

export function integrityRules(task: Pick<Task, 'id' | 'dir' | 'dagFile'> & { forbiddenSources?: string[] }): Rule[] {
  const rules: Rule[] = [];
  const evalDir = dirname(task.dagFile);
  const relEval = relative(task.dir, evalDir).split('\\').join('/');
  const add = (kind: Rule['kind'], rule: string, re: RegExp) => rules.push({ kind, rule, test: (t) => re.test(t) });
  add('evaluator_access', evalDir, new RegExp(esc(evalDir)));
  add('evaluator_access', task.dagFile, new RegExp(esc(task.dagFile)));
  if (relEval && relEval !== '.' && !relEval.startsWith('..')) add('evaluator_access', `${task.id}/${relEval}/`, new RegExp(`${esc(task.id)}/${esc(relEval)}(/|\\b)`));
  add('evaluator_access', 'dag.json / dag_smoke.json', /(^|[\s/'"=])dag(_smoke)?\.json\b/);
  add('evaluator_access', 'scoring_config.json', /\bscoring_config\.json\b/);
  add('evaluator_access', 'rubric files', /[\w./-]*rubrics?[\w-]*\.(json|md|ya?ml|txt)\b|\/rubrics\//i);
  add('evaluator_access', '/check/*_e/evaluate', /\/check\/[\w-]+_e\/evaluate\b|\btask_\w+_e\/evaluate\b/);
  add('check_access', '/check/<task>/', /\/check\/task_[a-z0-9]+\//);
  for (const src of task.forbiddenSources ?? []) {
    const core = src.replace(/^[a-z]+:\/\//i, '').replace(/\.git$/, '').replace(/\/+$/, '');
    const re = new RegExp(esc(core), 'i');
    rules.push({ kind: 'forbidden_source', rule: src, test: (t) => re.test(t) && (FETCH.test(t) || /^\s*\{?\s*"?url"?\s*:/.test(t)) });
  }
  return rules;
}

export function auditTranscript(task: Pick<Task, 'id' | 'dir' | 'dagFile'> & { forbiddenSources?: string[] }, trajectory: Trajectory | null, rawLines: string[]): IntegrityReport {
  const rules = integrityRules(task);
  const hits: IntegrityHit[] = [];
  const seen = new Set<string>();
  const record = (r: Rule, where: string, text: string) => {
    const key = `${r.kind}|${r.rule}|${where}`;
    if (seen.has(key)) return;
    seen.add(key);
    hits.push({ kind: r.kind, rule: r.rule, where, sample: text.slice(0, 400) });
  };
  let scannedToolCalls = 0;
  const callHit = new Set<string>();
  for (const s of trajectory?.steps ?? []) {
    if (s.kind !== 'agent') continue;
    for (const c of s.toolCalls) {
      scannedToolCalls++;
      const texts = [c.command, c.path, JSON.stringify(c.input)].filter((x): x is string => !!x);
      for (const r of rules) {
        // a fetch is judged on the command; WebFetch-style tools on their url
        const tx = r.kind === 'forbidden_source' && !c.command && typeof c.input.url === 'string' ? [`url: ${c.input.url}`] : texts;
        const t = tx.find((x) => r.test(x));
        if (t) {
          record(r, `tool:${c.id || c.name}`, t);
          callHit.add(`${r.kind}|${r.rule}`);
        }
      }
    }
  }
  // raw lines (the published harness's leak check): catches what a parser might miss — but only
  // for evaluator/check paths, and only rules no tool call already matched
  rawLines.forEach((line, i) => {
    for (const r of rules) {
      if (r.kind === 'forbidden_source' || callHit.has(`${r.kind}|${r.rule}`)) continue;
      if (r.test(line)) record(r, `line:${i + 1}`, line);
    }
  });
  const count = (k: IntegrityHit['kind']) => hits.filter((h) => h.kind === k).length;
  const evaluatorHits = count('evaluator_access');
  const checkHits = count('check_access');
  const forbiddenSourceHits = count('forbidden_source');
  const verdict: IntegrityReport['verdict'] = evaluatorHits ? 'voided' : forbiddenSourceHits ? 'flagged' : checkHits ? 'warning' : 'clean';
  const order: Record<IntegrityHit['kind'], number> = { evaluator_access: 0, forbidden_source: 1, check_access: 2 };
  return { verdict, evaluatorHits, checkHits, forbiddenSourceHits, scannedToolCalls, scannedLines: rawLines.length, samples: [...hits].sort((a, b) => order[a.kind] - order[b.kind]).slice(0, 5) };
}
