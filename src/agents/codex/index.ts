/**
 * Codex CLI, single-shot inside the task's app container, as the paper runs it:
 *   codex exec --disable plugins -c analytics.enabled=false --json --skip-git-repo-check
 *     --dangerously-bypass-approvals-and-sandbox -m <snapshot> -- <prompt>      (stdin </dev/null)
 * CODEX_HOME=/root/.codex holds a generated config.toml whose `model_providers.saasbench` entry
 * points at the rollout's LLM relay (wire_api "responses" — the only one Codex accepts) and reads the
 * relay token from SAASBENCH_RELAY_TOKEN (env_key). `--disable plugins` + analytics off = no
 * phone-home (github.com, chatgpt.com). Resume: `codex exec resume <thread_id> <prompt>`.
 */
import { join } from 'node:path';
import { stringify as stringifyToml } from 'smol-toml';
import { AgentConfigError } from '../../errors';
import { writeJson } from '../../runs/files';
import { shQuote } from '../../shell';
import { cliRetries } from '../claude-code';
import { CONTAINER_BIN_DIR, ensureAgentBinary, installIntoContainer, type CliPin } from '../install';
import { resolveModel, settingsRecord, type ResolvedModel } from '../models';
import { concatAttempts } from '../trajectory/files';
import type { AgentContext, AgentDriver, AgentLaunch } from '../types';
import { codexCompleted, codexThreadId, codexTrajectory, codexTransient } from './events';

export const CODEX_HOME = '/root/.codex';
export const RELAY_TOKEN_ENV = 'SAASBENCH_RELAY_TOKEN';
export const RESUME_PROMPT = 'Your previous session was interrupted. Continue the task from where you left off, then make sure the server is running on the designated port.';
const COMMON = ['--disable', 'plugins', '-c', 'analytics.enabled=false', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];

/**
 * The generated $CODEX_HOME/config.toml, as one object: the TOML is written from it (smol-toml) and
 * the same object is the "applied" record in agent/model-settings.json, so the record cannot drift
 * from the file. No secret in it: the relay token comes from the environment (env_key).
 */
export function codexConfig(m: ResolvedModel, relayUrl: string): { text: string; applied: Record<string, unknown> } {
  const retries = cliRetries();
  const applied = {
    model: m.snapshot,
    model_provider: 'saasbench',
    ...(m.reasoningEffort ? { model_reasoning_effort: m.reasoningEffort } : {}),
    ...(m.reasoningSummary ? { model_reasoning_summary: m.reasoningSummary } : {}),
    // Codex sends `reasoning` only for models it knows to reason (0.128 sends `reasoning: null` for
    // an unknown slug, e.g. gpt-5.6-sol): the registry's word makes it send effort and summary
    ...(m.reasoning ? { model_supports_reasoning_summaries: true } : {}),
    model_providers: {
      saasbench: {
        name: 'saasbench relay',
        base_url: relayUrl,
        env_key: RELAY_TOKEN_ENV,
        wire_api: 'responses',
        ...(retries !== null ? { request_max_retries: retries, stream_max_retries: retries } : {}),
      },
    },
    features: { plugins: false },
    analytics: { enabled: false },
  };
  return { text: stringifyToml(applied), applied };
}

/** The registry settings Codex has no setting for (listed as "not applied" in model-settings.json). */
export function codexNotApplied(m: ResolvedModel): string[] {
  return [
    `temperature ${m.temperature} (Codex sends none)`,
    ...(m.maxOutputTokens ? [`maxOutputTokens ${m.maxOutputTokens} (no Codex setting)`] : []),
    ...(m.thinking?.enabled ? ['thinking (a Responses-API model reasons by reasoning effort; no thinking setting)'] : []),
  ];
}

function launchWith(ctx: AgentContext, resumeThread: string | null, prompt: string): AgentLaunch {
  if (!ctx.llm) throw new AgentConfigError('codex: no LLM endpoint (the relay was not started)');
  const m = resolveModel(ctx.model);
  const args = resumeThread ? ['exec', 'resume', ...COMMON, '-m', m.snapshot, resumeThread, prompt] : ['exec', ...COMMON, '-m', m.snapshot, '--', prompt];
  const script = ['#!/bin/bash', `export PATH=${CONTAINER_BIN_DIR}:"$PATH"`, `exec ${CONTAINER_BIN_DIR}/codex ${args.map(shQuote).join(' ')} < /dev/null`, ''].join('\n');
  return { script, env: { HOME: '/root', CODEX_HOME, [RELAY_TOKEN_ENV]: ctx.llm.token }, workdir: ctx.workspace };
}

const TRIPLE: Record<string, string> = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' };

/** The paper's Codex CLI 0.128.0: `vendor/<triple>/codex/codex` (0.128) or `vendor/<triple>/bin/codex` (0.171). */
export const CODEX_PIN: CliPin = {
  agent: 'codex',
  pkg: '@openai/codex',
  defaultVersion: '0.128.0',
  versionEnv: 'SAASBENCH_CODEX_VERSION',
  binEnv: 'SAASBENCH_CODEX_BIN',
  name: 'codex',
  candidates(nm, arch) {
    const triple = TRIPLE[arch] ?? `${arch}-unknown-linux-musl`;
    const vendors = [
      join(nm, '@openai', `codex-linux-${arch}`, 'vendor', triple),
      join(nm, '@openai', 'codex', 'node_modules', '@openai', `codex-linux-${arch}`, 'vendor', triple),
      join(nm, '@openai', 'codex', 'vendor', triple),
    ];
    return vendors.flatMap((v) => [join(v, 'codex', 'codex'), join(v, 'bin', 'codex')]);
  },
};

export const codexAgent: AgentDriver = {
  name: 'codex',
  modelApis: ['openai'],
  cli: CODEX_PIN,
  transcriptFile: 'codex_events.jsonl',
  // rollout files `codex exec resume <thread>` reads (config.toml is written again by prepare())
  sessionPaths: [`${CODEX_HOME}/sessions`],
  preinstall: async () => void (await ensureAgentBinary(CODEX_PIN)),
  async prepare(ctx) {
    if (!ctx.llm) throw new AgentConfigError('codex: no LLM endpoint (the relay was not started)');
    const bin = await ensureAgentBinary(CODEX_PIN);
    await installIntoContainer(ctx.sandbox, ctx.container, bin);
    const m = resolveModel(ctx.model);
    const cfg = codexConfig(m, ctx.llm.baseUrl);
    await ctx.sandbox.writeFiles(ctx.container, CODEX_HOME, [{ path: 'config.toml', content: cfg.text, mode: 0o600 }]);
    writeJson(join(ctx.runDir, 'agent', 'model-settings.json'), {
      ...settingsRecord('codex', m, cfg.applied, codexNotApplied(m)),
      binary: { version: bin.version, source: bin.source },
      configToml: cfg.text,
    });
  },
  launch: (ctx) => launchWith(ctx, null, ctx.prompt),
  resume(ctx, previous) {
    const thread = codexThreadId(previous.stdout);
    return thread ? launchWith(ctx, thread, RESUME_PROMPT) : null;
  },
  transientFailure: codexTransient,
  completed: codexCompleted,
  async finalize(ctx, attempts) {
    concatAttempts(ctx.runDir, attempts, 'codex_events.jsonl', 'codex_stderr.log');
    const bin = await ensureAgentBinary(CODEX_PIN).catch(() => null);
    return codexTrajectory(attempts, { model: ctx.model, prompt: ctx.prompt, agentVersion: bin?.version ?? null });
  },
};
