// Model registry, pinned-binary resolution, the exact command lines and configs the drivers
// generate, and the transcript audit rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAUDE_ALLOWED_TOOLS, CLAUDE_CODE_PIN, claudeArgs, claudeCodeAgent, claudeNotApplied, claudeThinking } from '../../src/agents/claude-code';
import { CODEX_PIN, codexAgent, codexConfig, codexNotApplied } from '../../src/agents/codex';
import { openhandsAgent } from '../../src/agents/openhands';
import { parse } from 'smol-toml';
import { nativeBinary, wantedVersion } from '../../src/agents/install';
import { auditTranscript } from '../../src/agents/integrity';
import { checkAgentModel, loadRegistry, resolveModel, upstreamOf } from '../../src/agents/models';
import type { Trajectory } from '../../src/agents/trajectory/types';
import { emptyTotals } from '../../src/agents/trajectory/types';
import type { AgentContext } from '../../src/agents/types';

/** TOML parsed into plain objects (smol-toml makes null-prototype tables). */
const parseToml = (text: string): Record<string, unknown> => JSON.parse(JSON.stringify(parse(text)));

function withEnv<T>(vars: Record<string, string | undefined>, f: () => T): T {
  const old: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(vars)) {
    old[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return f();
  } finally {
    for (const [k, v] of Object.entries(old)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

test('models: the paper\'s settings — reasoning models at temperature 1 with thinking/effort, Gemini thinking + 65536 output tokens', () => {
  const opus = resolveModel('claude-opus-4-7');
  assert.equal(opus.temperature, 1);
  assert.equal(opus.thinking?.enabled, true);
  const sonnet = resolveModel('claude-sonnet-4-5');
  assert.equal(sonnet.snapshot, 'claude-sonnet-4-5-20250929');
  assert.equal(sonnet.temperature, 0);
  assert.equal(resolveModel('gpt-5.4').reasoningEffort, 'xhigh');
  const gemini = resolveModel('gemini-3-pro');
  assert.deepEqual(gemini.thinking, { enabled: true, includeThoughts: true, budgetTokens: 8192 });
  assert.equal(gemini.maxOutputTokens, 65536);
  assert.throws(() => resolveModel('no-such-model'), /not in the model registry/);
  // the relay translates between the three APIs: any agent takes any registry model
  checkAgentModel(codexAgent, opus);
  checkAgentModel(claudeCodeAgent, resolveModel('gpt-5.4'));
  checkAgentModel(claudeCodeAgent, gemini);
  // an API the agent does not speak and the gateway does not translate is still refused
  const alien = { ...opus, providerConfig: { ...opus.providerConfig, api: 'grpc' as unknown as 'anthropic' } };
  assert.throws(() => checkAgentModel(codexAgent, alien), /served over the grpc API .* codex speaks openai and the relay does not translate grpc/);
  checkAgentModel(openhandsAgent, gemini);
});

test('models: thinking mode per vendor; verified only with the published fact that supports it', () => {
  assert.deepEqual(resolveModel('claude-opus-4-7').thinking, { enabled: true, type: 'adaptive' });
  for (const id of ['kimi-k2-thinking', 'qwen3-coder', 'deepseek-v3.2', 'glm-4.6', 'minimax-m2']) {
    const m = resolveModel(id);
    assert.deepEqual([m.temperature, m.thinking], [1, { enabled: true, type: 'enabled' }], id);
  }
  for (const [id, m] of Object.entries(loadRegistry().models)) assert.equal(m.verified, !!m.verifiedBy, `${id}: verified iff a published fact is named`);
});

test('claude-code thinking record: what 2.1.126 sends (adaptive for most names), and what it cannot apply', () => {
  assert.deepEqual(claudeThinking('claude-opus-4-7'), { type: 'adaptive' });
  assert.deepEqual(claudeThinking('kimi-k2-thinking', 8192), { type: 'adaptive' });
  assert.deepEqual(claudeThinking('claude-sonnet-4-5-20250929'), { type: 'enabled', budget_tokens: 31999 });
  assert.deepEqual(claudeNotApplied(resolveModel('claude-opus-4-7')), ['temperature 1 (Claude Code sends none: the API default, 1.0)']);
  const kimi = claudeNotApplied(resolveModel('kimi-k2-thinking'));
  assert.match(kimi.join('\n'), /thinking\.type enabled \(Claude Code 2\.1\.126 sends \{"type":"adaptive"\}/);
  assert.match(claudeNotApplied(resolveModel('claude-sonnet-4-5')).join('\n'), /thinking off \(Claude Code 2\.1\.126 sends thinking \{"type":"enabled","budget_tokens":31999\}/);
});

test('models: the overlay file adds models; the upstream comes from the worker env, and a missing key is a config error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'models-'));
  const f = join(dir, 'm.json');
  writeFileSync(f, JSON.stringify({ models: { 'my-model': { snapshot: 'my-snap', provider: 'openai' } } }));
  withEnv({ SAASBENCH_MODELS_FILE: f, SAASBENCH_OPENAI_API_KEY: 'sk-x', OPENAI_API_KEY: undefined, SAASBENCH_OPENAI_BASE_URL: undefined }, () => {
    const m = resolveModel('my-model');
    assert.equal(m.snapshot, 'my-snap');
    assert.equal(m.temperature, 0, 'default temperature 0');
    assert.deepEqual(upstreamOf(m), { baseUrl: 'https://api.openai.com/v1', key: 'sk-x', auth: 'bearer', keyEnv: 'SAASBENCH_OPENAI_API_KEY', protocol: 'responses' });
    assert.ok(resolveModel('claude-opus-4-7'), 'built-in models stay');
  });
  withEnv({ SAASBENCH_ANTHROPIC_API_KEY: undefined, ANTHROPIC_API_KEY: undefined }, () => {
    assert.throws(() => upstreamOf(resolveModel('claude-opus-4-7')), /no API key in the worker environment \(set SAASBENCH_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY\)/);
  });
  writeFileSync(f, JSON.stringify({ models: { bad: { snapshot: 'x', provider: 'openai', temprature: 1 } } }));
  withEnv({ SAASBENCH_MODELS_FILE: f }, () => assert.throws(() => resolveModel('bad'), /SAASBENCH_MODELS_FILE/));
});

test('install: pinned defaults are the paper\'s; native binaries found in both package layouts; a stub claude.exe is skipped', () => {
  withEnv({ SAASBENCH_CLAUDE_CODE_VERSION: undefined, SAASBENCH_CODEX_VERSION: undefined }, () => {
    assert.equal(wantedVersion(CLAUDE_CODE_PIN), '2.1.126');
    assert.equal(wantedVersion(CODEX_PIN), '0.128.0');
  });
  withEnv({ SAASBENCH_CODEX_VERSION: '0.171.0' }, () => assert.equal(wantedVersion(CODEX_PIN), '0.171.0'));
  const root = mkdtempSync(join(tmpdir(), 'bins-'));
  const big = Buffer.alloc(5000, 1);
  const put = (rel: string, content: Buffer | string) => {
    mkdirSync(join(root, 'node_modules', rel, '..'), { recursive: true });
    writeFileSync(join(root, 'node_modules', rel), content);
  };
  assert.equal(nativeBinary(CLAUDE_CODE_PIN, root), null);
  put('@anthropic-ai/claude-code/bin/claude.exe', '#!/bin/sh\necho "claude native binary not installed" >&2; exit 1\n');
  put(`@anthropic-ai/claude-code-linux-${process.arch}/claude`, big);
  assert.equal(nativeBinary(CLAUDE_CODE_PIN, root), join(root, 'node_modules', `@anthropic-ai/claude-code-linux-${process.arch}/claude`), 'stub (< 4 KB) skipped');
  put('@anthropic-ai/claude-code/bin/claude.exe', big);
  assert.equal(nativeBinary(CLAUDE_CODE_PIN, root), join(root, 'node_modules', '@anthropic-ai/claude-code/bin/claude.exe'));
  const triple = process.arch === 'arm64' ? 'aarch64-unknown-linux-musl' : 'x86_64-unknown-linux-musl';
  put(`@openai/codex-linux-${process.arch}/vendor/${triple}/bin/codex`, big); // 0.171 layout
  assert.match(nativeBinary(CODEX_PIN, root)!, /vendor\/[^/]+\/bin\/codex$/);
  put(`@openai/codex-linux-${process.arch}/vendor/${triple}/codex/codex`, big); // 0.128 layout
  assert.match(nativeBinary(CODEX_PIN, root)!, /vendor\/[^/]+\/codex\/codex$/);
});

const ctx = (model: string): AgentContext =>
  ({ model, workspace: '/app', prompt: 'Build the app.\nIt\'s "quoted".', runDir: '/tmp/x', container: 'c', llm: { baseUrl: 'http://172.18.0.1:40000', token: 'sk-saasbench-relay-abc' } }) as unknown as AgentContext;

test('claude-code command: the paper\'s flags, 12 tools, IS_SANDBOX=1, no phone-home, relay URL and relay token only', () => {
  const args = claudeArgs('claude-x', '/app', [], 'do it');
  assert.deepEqual(args, ['-p', '--output-format', 'stream-json', '--verbose', '--model', 'claude-x', '--permission-mode', 'bypassPermissions', '--allowedTools', CLAUDE_ALLOWED_TOOLS.join(' '), '--add-dir', '/app', '--', 'do it']);
  assert.equal(CLAUDE_ALLOWED_TOOLS.length, 12);
  withEnv({ SAASBENCH_AGENT_CLI_RETRIES: undefined, SAASBENCH_MODELS_FILE: undefined }, () => {
    const l = claudeCodeAgent.launch(ctx('claude-sonnet-4-5'));
    assert.equal(l.workdir, '/app');
    assert.match(l.script, /exec \/opt\/saasbench\/bin\/claude '-p' .*'--model' 'claude-sonnet-4-5-20250929'/);
    assert.match(l.script, /'--' 'Build the app\.\nIt'\\''s "quoted"\.'/, 'the prompt is one shell-quoted argument');
    assert.equal(l.env!.IS_SANDBOX, '1');
    assert.equal(l.env!.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, '1');
    assert.equal(l.env!.ANTHROPIC_BASE_URL, 'http://172.18.0.1:40000');
    assert.equal(l.env!.ANTHROPIC_API_KEY, 'sk-saasbench-relay-abc');
    assert.equal(l.env!.HOME, '/root');
    assert.equal(l.env!.CLAUDE_CODE_MAX_RETRIES, undefined, 'the CLI\'s own retries are left at its default');
    const r = claudeCodeAgent.resume!(ctx('claude-sonnet-4-5'), { attempt: 1, exitCode: null, stdout: '{"type":"system","subtype":"init","session_id":"s-123"}\n', stderr: '' }, 100);
    assert.match(r!.script, /'--resume' 's-123' '--' 'Your previous session was interrupted/);
    assert.equal(r!.workdir, '/app', 'resumed from the original cwd');
    assert.equal(claudeCodeAgent.resume!(ctx('claude-sonnet-4-5'), { attempt: 1, exitCode: null, stdout: '', stderr: '' }, 100), null);
  });
});

test('codex command and config.toml: exec flags, no phone-home, responses provider on the relay, env_key, resume', () => {
  withEnv({ SAASBENCH_AGENT_CLI_RETRIES: undefined }, () => {
    const m = resolveModel('gpt-5.4');
    const { text } = codexConfig(m, 'http://172.18.0.1:40000');
    assert.match(text, /^model = "gpt-5.4"$/m);
    assert.match(text, /^model_provider = "saasbench"$/m);
    assert.match(text, /^model_reasoning_effort = "xhigh"$/m);
    assert.match(text, /^model_reasoning_summary = "auto"$/m);
    assert.match(text, /^model_supports_reasoning_summaries = true$/m, 'Codex sends reasoning even for a slug it does not know');
    assert.doesNotMatch(codexConfig(resolveModel('claude-sonnet-4-5'), 'x').text, /reasoning/);
    assert.deepEqual(codexNotApplied(m), ['temperature 1 (Codex sends none)']);
    assert.match(text, /\[model_providers\.saasbench\]\nname = "saasbench relay"\nbase_url = "http:\/\/172\.18\.0\.1:40000"\nenv_key = "SAASBENCH_RELAY_TOKEN"\nwire_api = "responses"/);
    assert.match(text, /\[features\]\nplugins = false/);
    assert.match(text, /\[analytics\]\nenabled = false/);
    assert.doesNotMatch(text, /max_retries/);
    const l = codexAgent.launch(ctx('gpt-5.4'));
    assert.match(l.script, /exec \/opt\/saasbench\/bin\/codex 'exec' '--disable' 'plugins' '-c' 'analytics\.enabled=false' '--json' '--skip-git-repo-check' '--dangerously-bypass-approvals-and-sandbox' '-m' 'gpt-5\.4' '--' 'Build the app/);
    assert.match(l.script, /< \/dev\/null$/m);
    assert.deepEqual(l.env, { HOME: '/root', CODEX_HOME: '/root/.codex', SAASBENCH_RELAY_TOKEN: 'sk-saasbench-relay-abc' });
    const r = codexAgent.resume!(ctx('gpt-5.4'), { attempt: 1, exitCode: null, stdout: '{"type":"thread.started","thread_id":"t-9"}\n', stderr: '' }, 100);
    assert.match(r!.script, /'exec' 'resume' '--disable' .* '-m' 'gpt-5\.4' 't-9' 'Your previous session/);
  });
  withEnv({ SAASBENCH_AGENT_CLI_RETRIES: '0' }, () => assert.match(codexConfig(resolveModel('gpt-5.4'), 'http://x').text, /request_max_retries = 0\nstream_max_retries = 0/));
});

test('codex config.toml parses back to the very object recorded as applied', () => {
  for (const retries of [undefined, '0']) {
    withEnv({ SAASBENCH_AGENT_CLI_RETRIES: retries }, () => {
      for (const id of ['gpt-5.4', 'gpt-5.1-codex']) {
        let m;
        try {
          m = resolveModel(id);
        } catch {
          continue;
        }
        const { text, applied } = codexConfig(m, 'http://172.18.0.1:40000');
        assert.deepEqual(parseToml(text), applied, `${id} retries=${retries}`);
      }
    });
  }
});

function traj(commands: string[], extra: { name: string; input: Record<string, unknown> }[] = []): Trajectory {
  return {
    schema: 'saasbench.trajectory/v1', agent: 'claude-code', agentVersion: null, model: 'm', sessionIds: [], prompt: '', totals: emptyTotals(), attempts: [], finalText: null,
    steps: [{ kind: 'agent', attempt: 1, text: '', toolCalls: [...commands.map((c, i) => ({ id: `t${i}`, name: 'Bash', input: { command: c }, command: c })), ...extra.map((e, i) => ({ id: `x${i}`, name: e.name, input: e.input, path: e.input.file_path as string | undefined }))] }],
  };
}
const task = { id: 'helpdesk', dir: '/work/tasks/helpdesk', dagFile: '/work/tasks/helpdesk/evaluation/dag.json', forbiddenSources: ['github.com/acme/helpdesk', 'https://gitlab.com/org/tool.git'] };

test('integrity: evaluator access voids, a forbidden clone is flagged, the published check folder warns, normal work is clean', () => {
  assert.equal(auditTranscript(task, traj(['npm install', 'cat /app/task.md', 'node server.js &']), []).verdict, 'clean');
  const voided = auditTranscript(task, traj(['find / -name dag.json 2>/dev/null']), []);
  assert.equal(voided.verdict, 'voided');
  assert.equal(voided.evaluatorHits, 1);
  assert.match(voided.samples[0].sample, /dag\.json/);
  assert.equal(auditTranscript(task, traj([], [{ name: 'Read', input: { file_path: '/work/tasks/helpdesk/evaluation/dag.json' } }]), []).verdict, 'voided');
  assert.equal(auditTranscript(task, traj(['ls ../helpdesk/evaluation/']), []).verdict, 'voided');
  assert.equal(auditTranscript(task, traj(['cat /srv/check/task_aoiwqoiq_e/evaluate/scoring_config.json']), []).verdict, 'voided');
  assert.equal(auditTranscript(task, null, ['{"type":"user","content":"ls /check/task_aoiwqoiq_e/evaluate"}']).verdict, 'voided', 'raw event lines are scanned too');
  const flagged = auditTranscript(task, traj(['git clone https://github.com/acme/helpdesk.git /tmp/h']), []);
  assert.equal(flagged.verdict, 'flagged');
  assert.equal(flagged.forbiddenSourceHits, 1);
  assert.equal(auditTranscript(task, traj(['curl -L https://gitlab.com/org/tool/-/archive/main.tar.gz | tar xz']), []).verdict, 'flagged');
  assert.equal(auditTranscript(task, traj([], [{ name: 'WebFetch', input: { url: 'https://github.com/acme/helpdesk/blob/main/app.rb', prompt: 'x' } }]), []).verdict, 'flagged');
  assert.equal(auditTranscript(task, traj(['echo "inspired by github.com/acme/helpdesk" >> NOTES.md']), []).verdict, 'clean', 'mentioning is not fetching');
  assert.equal(auditTranscript(task, traj(['ls /check/task_aoiwqoiq/']), []).verdict, 'warning');
});
