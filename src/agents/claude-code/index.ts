/**
 * Claude Code, headless inside the task's app container, as the paper runs it:
 *   claude -p --output-format stream-json --verbose --model <snapshot>
 *     --permission-mode bypassPermissions --allowedTools "<the paper's 12>" --add-dir <ws> -- <prompt>
 * with IS_SANDBOX=1 (root may bypass permissions only then; "yes"/"true" are refused),
 * CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no phone-home), the rollout's LLM relay as
 * ANTHROPIC_BASE_URL and the relay token as ANTHROPIC_API_KEY, HOME=/root kept for the whole
 * rollout so `--resume <session>` finds its transcript (2.1.126 resumes only from the original cwd).
 */
import { join } from 'node:path';
import { AgentConfigError } from '../../errors';
import { writeJson } from '../../runs/files';
import { shQuote } from '../../shell';
import { CONTAINER_BIN_DIR, ensureAgentBinary, installIntoContainer, type CliPin } from '../install';
import { resolveModel, settingsRecord, type ResolvedModel } from '../models';
import type { AgentContext, AgentDriver, AgentLaunch, AttemptOutput } from '../types';
import { claudeCompleted, claudeSessionId, claudeTrajectory, claudeTransient } from './events';
import { concatAttempts } from '../trajectory/files';

/** The paper's 12 core tools (2.1.126 knows 9 of these names and silently ignores LS, NotebookRead, TodoRead). */
export const CLAUDE_ALLOWED_TOOLS = ['Bash', 'Edit', 'Write', 'Read', 'Glob', 'Grep', 'LS', 'WebFetch', 'NotebookEdit', 'NotebookRead', 'TodoRead', 'TodoWrite'];
export const CLAUDE_HOME = '/root';
export const RESUME_PROMPT = 'Your previous session was interrupted. Continue the task from where you left off, then make sure the server is running on the designated port.';

function env(ctx: AgentContext, m: ResolvedModel): { env: Record<string, string>; applied: Record<string, unknown> } {
  if (!ctx.llm) throw new AgentConfigError('claude-code: no LLM endpoint (the relay was not started)');
  const e: Record<string, string> = {
    HOME: CLAUDE_HOME,
    IS_SANDBOX: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    ANTHROPIC_BASE_URL: ctx.llm.baseUrl,
    ANTHROPIC_API_KEY: ctx.llm.token,
    // every model tier Claude Code might pick resolves to the rollout's model
    ANTHROPIC_MODEL: m.snapshot,
    ANTHROPIC_DEFAULT_OPUS_MODEL: m.snapshot,
    ANTHROPIC_DEFAULT_SONNET_MODEL: m.snapshot,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: m.snapshot,
    ANTHROPIC_SMALL_FAST_MODEL: m.snapshot,
  };
  const applied: Record<string, unknown> = { model: m.snapshot };
  if (m.thinking?.budgetTokens) applied.MAX_THINKING_TOKENS = e.MAX_THINKING_TOKENS = String(m.thinking.budgetTokens);
  // Claude Code chooses the thinking body itself; the record says what it sends (observed)
  applied.thinking = claudeThinking(m.snapshot, m.thinking?.budgetTokens);
  if (m.maxOutputTokens) applied.CLAUDE_CODE_MAX_OUTPUT_TOKENS = e.CLAUDE_CODE_MAX_OUTPUT_TOKENS = String(m.maxOutputTokens);
  const retries = cliRetries();
  if (retries !== null) applied.CLAUDE_CODE_MAX_RETRIES = e.CLAUDE_CODE_MAX_RETRIES = String(retries);
  return { env: e, applied };
}

/**
 * The `thinking` body Claude Code 2.1.126 sends, as observed against the fake Anthropic server
 * (2026-12-01): `{type: "adaptive"}` (with its own `output_config.effort`) for every model name —
 * claude-opus-4-7, claude-sonnet-4-6, kimi-k2-thinking, glm-4.6, unknown names — except the two
 * below, where it sends `{type: "enabled", budget_tokens}` = MAX_THINKING_TOKENS or 31999. For an
 * adaptive model neither MAX_THINKING_TOKENS nor CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING changes the
 * body, and it never sends a temperature. test/integration/agents-cli.test.ts checks this record
 * against the fake's requests.
 */
const CLAUDE_BUDGETED_THINKING = [/claude-sonnet-4-5/, /claude-opus-4-5/];
export function claudeThinking(snapshot: string, budgetTokens?: number): Record<string, unknown> {
  return CLAUDE_BUDGETED_THINKING.some((r) => r.test(snapshot)) ? { type: 'enabled', budget_tokens: budgetTokens ?? 31999 } : { type: 'adaptive' };
}

/** The registry settings Claude Code cannot apply (listed as "not applied" in model-settings.json). */
export function claudeNotApplied(m: ResolvedModel): string[] {
  const sent = claudeThinking(m.snapshot, m.thinking?.budgetTokens);
  const out = [`temperature ${m.temperature} (Claude Code sends none: the API default, 1.0)`];
  if (!m.thinking?.enabled) out.push(`thinking off (Claude Code 2.1.126 sends thinking ${JSON.stringify(sent)} itself for this model)`);
  else {
    if (m.thinking.type && m.thinking.type !== sent.type) out.push(`thinking.type ${m.thinking.type} (Claude Code 2.1.126 sends ${JSON.stringify(sent)} for this model; no setting changes it)`);
    if (m.thinking.budgetTokens && sent.type === 'adaptive') out.push(`thinking budget ${m.thinking.budgetTokens} (MAX_THINKING_TOKENS is ignored with adaptive thinking)`);
    if (m.thinking.includeThoughts) out.push('includeThoughts (a Gemini setting; no Claude Code setting)');
  }
  if (m.reasoningEffort) out.push(`reasoningEffort ${m.reasoningEffort} (Claude Code sends its own output_config.effort)`);
  return out;
}

/** SAASBENCH_AGENT_CLI_RETRIES: the CLIs' own API retry count (unset: their defaults, as the paper ran). */
export function cliRetries(): number | null {
  const v = process.env.SAASBENCH_AGENT_CLI_RETRIES;
  if (v === undefined || v.trim() === '') return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new AgentConfigError(`SAASBENCH_AGENT_CLI_RETRIES=${v}: expected a non-negative integer`);
  return n;
}

export function claudeArgs(model: string, workspace: string, extra: string[], prompt: string): string[] {
  return ['-p', '--output-format', 'stream-json', '--verbose', '--model', model, '--permission-mode', 'bypassPermissions', '--allowedTools', CLAUDE_ALLOWED_TOOLS.join(' '), '--add-dir', workspace, ...extra, '--', prompt];
}

function script(args: string[]): string {
  return ['#!/bin/bash', `export PATH=${CONTAINER_BIN_DIR}:"$PATH"`, `exec ${CONTAINER_BIN_DIR}/claude ${args.map(shQuote).join(' ')}`, ''].join('\n');
}

function launchWith(ctx: AgentContext, extra: string[], prompt: string): AgentLaunch {
  const m = resolveModel(ctx.model);
  return { script: script(claudeArgs(m.snapshot, ctx.workspace, extra, prompt)), env: env(ctx, m).env, workdir: ctx.workspace };
}

/**
 * The paper's Claude Code 2.1.126. `bin/claude.exe` is the real binary only when the package's
 * postinstall ran (else a stub the size check skips); then the platform package's `claude`.
 */
export const CLAUDE_CODE_PIN: CliPin = {
  agent: 'claude-code',
  pkg: '@anthropic-ai/claude-code',
  defaultVersion: '2.1.126',
  versionEnv: 'SAASBENCH_CLAUDE_CODE_VERSION',
  binEnv: 'SAASBENCH_CLAUDE_CODE_BIN',
  name: 'claude',
  candidates: (nm, arch) => [
    join(nm, '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'),
    join(nm, '@anthropic-ai', `claude-code-linux-${arch}`, 'claude'),
    join(nm, '@anthropic-ai', 'claude-code', 'node_modules', '@anthropic-ai', `claude-code-linux-${arch}`, 'claude'),
  ],
};

export const claudeCodeAgent: AgentDriver = {
  name: 'claude-code',
  modelApis: ['anthropic'],
  cli: CLAUDE_CODE_PIN,
  transcriptFile: 'claude_events.jsonl',
  // the session transcripts (~/.claude/projects/<cwd>/<session>.jsonl) `--resume` reads
  sessionPaths: [`${CLAUDE_HOME}/.claude`, `${CLAUDE_HOME}/.claude.json`],
  preinstall: async () => void (await ensureAgentBinary(CLAUDE_CODE_PIN)),
  async prepare(ctx) {
    const bin = await ensureAgentBinary(CLAUDE_CODE_PIN);
    await installIntoContainer(ctx.sandbox, ctx.container, bin);
    const m = resolveModel(ctx.model);
    const { applied } = env(ctx, m);
    writeJson(join(ctx.runDir, 'agent', 'model-settings.json'), {
      ...settingsRecord('claude-code', m, applied, claudeNotApplied(m)),
      binary: { version: bin.version, source: bin.source },
    });
  },
  launch: (ctx) => launchWith(ctx, [], ctx.prompt),
  resume(ctx, previous: AttemptOutput) {
    const sid = claudeSessionId(previous.stdout);
    return sid ? launchWith(ctx, ['--resume', sid], RESUME_PROMPT) : null;
  },
  transientFailure: claudeTransient,
  completed: claudeCompleted,
  async finalize(ctx, attempts) {
    concatAttempts(ctx.runDir, attempts, 'claude_events.jsonl', 'claude_stderr.log');
    const bin = await ensureAgentBinary(CLAUDE_CODE_PIN).catch(() => null);
    return claudeTrajectory(attempts, { model: ctx.model, prompt: ctx.prompt, agentVersion: bin?.version ?? null });
  },
};
