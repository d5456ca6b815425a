import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../../runs/files';
import type { AgentRunSummary } from '../../model/rollout';
import type { AttemptOutput } from '../types';

/** The attempts the supervisor kept in <runDir>/agent/attempt-N/{stdout,stderr}.log, in order. */
export function readAttempts(runDir: string, history: AgentRunSummary['history'] = []): AttemptOutput[] {
  const dir = join(runDir, 'agent');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((d) => /^attempt-(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
    .map((attempt) => {
      const read = (f: string) => {
        const p = join(dir, `attempt-${attempt}`, f);
        return existsSync(p) ? readFileSync(p, 'utf8') : '';
      };
      return { attempt, exitCode: history.find((h) => h.attempt === attempt)?.exitCode ?? null, stdout: read('stdout.log'), stderr: read('stderr.log') };
    });
}

/**
 * The agent's event stream as the paper names it (claude_events.jsonl / codex_events.jsonl): all
 * attempts' stdout in order (each attempt starts with its own init/thread event), and stderr beside it.
 * Each attempt's own logs stay in agent/attempt-N/.
 */
export function concatAttempts(runDir: string, attempts: AttemptOutput[], eventsName: string, stderrName: string): void {
  const nl = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);
  writeAtomic(join(runDir, eventsName), attempts.map((a) => nl(a.stdout)).join(''));
  writeAtomic(join(runDir, stderrName), attempts.map((a) => `--- attempt ${a.attempt} (exit ${a.exitCode ?? 'none'}) ---\n${nl(a.stderr)}`).join(''));
}
