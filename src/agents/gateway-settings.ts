/**
 * The registry's per-model settings applied by the gateway (the per-rollout relay) to every model
 * request, whatever the agent sent: sampling temperature, thinking/reasoning switches and budgets,
 * max output tokens — in the upstream protocol's own field names, after translation. This is how
 * the paper's settings reach agents whose CLIs cannot set them (Claude Code and Codex send no
 * temperature). What was set and what the agent had sent instead is recorded per rollout
 * (relay-stats.json `settings`, report.json `agentRun.gateway.settings`); docs/gateway.md.
 *
 * Requests naming another model than the rollout's snapshot (Claude Code's background calls to its
 * small model, passed through to an Anthropic upstream) are left alone: the registry describes the
 * snapshot, and its thinking mode may not exist on another model.
 */
import type { Protocol } from '../gateway';
import type { SettingsStats } from '../model/cost';

export type { SettingsStats };

/** The registry fields the gateway applies (a ModelEntry of models.ts fits; kept apart so models.ts can use this module). */
export interface SettingsModel {
  snapshot: string;
  reasoning: boolean;
  temperature: number;
  thinking?: { enabled: boolean; type?: 'adaptive' | 'enabled'; includeThoughts?: boolean; budgetTokens?: number };
  reasoningEffort?: string;
  reasoningSummary?: string;
  maxOutputTokens?: number;
  relayBodyOverrides?: Record<string, unknown>;
}

/** A field the gateway removed from the request (recorded as this string). */
export const REMOVED = '(removed)';

export interface SettingsOutcome {
  body: Record<string, unknown>;
  /** dotted field path → the value the gateway set (REMOVED for a field it deleted) */
  applied: Record<string, unknown>;
  /** dotted field path → what the agent had sent there, where it differed from what was applied */
  overridden: Record<string, unknown>;
  /** registry settings with no field in this protocol, with why */
  notApplicable: string[];
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Apply the registry's settings of `m` to one request body of the upstream protocol `protocol`. */
export function applyGatewaySettings(protocol: Protocol, input: Json, m: SettingsModel): SettingsOutcome {
  const body: Json = structuredClone(input);
  const out: SettingsOutcome = { body, applied: {}, overridden: {}, notApplicable: [] };
  const set = (path: string, value: unknown) => setField(out, path, value);
  if (protocol === 'anthropic') anthropic(body, m, set, out.notApplicable);
  else if (protocol === 'chat') chat(body, m, set, out.notApplicable);
  else responses(body, m, set, out.notApplicable);
  // the registry's escape hatch, last: merged as given (top-level fields)
  for (const [k, v] of Object.entries(m.relayBodyOverrides ?? {})) set(k, v);
  return out;
}

/** What the gateway sets for a model on a protocol, as a request without any agent settings shows it. */
export function gatewayPlan(protocol: Protocol, m: SettingsModel): Pick<SettingsOutcome, 'applied' | 'notApplicable'> {
  const r = applyGatewaySettings(protocol, { model: m.snapshot }, m);
  return { applied: r.applied, notApplicable: r.notApplicable };
}

type Setter = (path: string, value: unknown) => void;

function anthropic(body: Json, m: SettingsModel, set: Setter, na: string[]): void {
  set('temperature', m.temperature);
  if (m.maxOutputTokens) set('max_tokens', m.maxOutputTokens);
  const t = m.thinking;
  if (t?.enabled) {
    const type = t.type ?? 'enabled';
    const sent = isObj(body.thinking) ? body.thinking : undefined;
    if (type === 'adaptive') {
      set('thinking', { type: 'adaptive' });
      if (t.budgetTokens) na.push(`thinking.budgetTokens ${t.budgetTokens} (adaptive thinking takes no budget)`);
    } else {
      // the API requires a budget with "enabled": the registry's, else the one the agent sent
      const budget = t.budgetTokens ?? (typeof sent?.budget_tokens === 'number' ? sent.budget_tokens : undefined);
      set('thinking', budget !== undefined ? { type: 'enabled', budget_tokens: budget } : { type: 'enabled' });
    }
  } else if (t?.enabled === false || !m.reasoning) {
    // the paper ran this model without thinking (and thinking forbids temperatures other than 1)
    if (body.thinking !== undefined) set('thinking', REMOVED);
  }
  if (t?.includeThoughts !== undefined) na.push('thinking.includeThoughts (a Gemini setting; no Anthropic field)');
  if (m.reasoningEffort) na.push(`reasoningEffort ${m.reasoningEffort} (an OpenAI setting; the Anthropic registry entries use thinking)`);
  if (m.reasoningSummary) na.push(`reasoningSummary ${m.reasoningSummary} (a Responses-API setting)`);
}

function chat(body: Json, m: SettingsModel, set: Setter, na: string[]): void {
  set('temperature', m.temperature);
  if (m.maxOutputTokens) {
    // the field the agent used (newer OpenAI clients send max_completion_tokens), else max_tokens,
    // which every Chat-compatible vendor reads; never both
    if (body.max_completion_tokens !== undefined) {
      set('max_completion_tokens', m.maxOutputTokens);
      if (body.max_tokens !== undefined) set('max_tokens', REMOVED);
    } else set('max_tokens', m.maxOutputTokens);
  }
  const t = m.thinking;
  const gemini = t?.enabled && (t.includeThoughts !== undefined || t.budgetTokens !== undefined);
  if (gemini) {
    // Gemini's OpenAI endpoint: thinking in extra_body.google.thinking_config (not together with reasoning_effort)
    const tc: Json = {};
    if (t.includeThoughts !== undefined) tc.include_thoughts = t.includeThoughts;
    if (t.budgetTokens !== undefined) tc.thinking_budget = t.budgetTokens;
    set('extra_body.google.thinking_config', tc);
    if (body.reasoning_effort !== undefined) set('reasoning_effort', REMOVED);
    if (m.reasoningEffort) na.push(`reasoningEffort ${m.reasoningEffort} (Gemini takes thinking_config or reasoning_effort, not both: thinking_config applied)`);
  } else {
    if (m.reasoningEffort) set('reasoning_effort', m.reasoningEffort);
    if (t?.enabled) na.push('thinking (no Chat Completions field for it other than Gemini\'s thinking_config, which needs includeThoughts or budgetTokens)');
  }
  // metering: a Chat stream reports usage only when asked to
  if (body.stream === true) set('stream_options.include_usage', true);
  if (m.reasoningSummary) na.push(`reasoningSummary ${m.reasoningSummary} (a Responses-API setting)`);
}

function responses(body: Json, m: SettingsModel, set: Setter, na: string[]): void {
  set('temperature', m.temperature);
  if (m.maxOutputTokens) set('max_output_tokens', m.maxOutputTokens);
  if (m.reasoningEffort) set('reasoning.effort', m.reasoningEffort);
  if (m.reasoningSummary) set('reasoning.summary', m.reasoningSummary);
  if (m.thinking?.enabled) na.push('thinking (a Responses-API model reasons by reasoning.effort; no thinking field)');
  void body;
}

/** Set a dotted path in the body, recording what was applied and what the agent had sent. */
function setField(out: SettingsOutcome, path: string, value: unknown): void {
  const keys = path.split('.');
  let obj: Json = out.body;
  for (const k of keys.slice(0, -1)) {
    if (!isObj(obj[k])) obj[k] = {};
    obj = obj[k] as Json;
  }
  const last = keys[keys.length - 1];
  const before = obj[last];
  if (value === REMOVED) delete obj[last];
  else obj[last] = isObj(value) && isObj(before) && path !== 'thinking' ? { ...before, ...value } : value;
  out.applied[path] = value;
  if (before !== undefined && JSON.stringify(before) !== JSON.stringify(value)) out.overridden[path] = before;
}

export function newSettingsStats(): SettingsStats {
  return { appliedAt: 'gateway', requests: 0, otherModelRequests: 0, applied: {}, overridden: {}, notApplicable: [] };
}

/**
 * One model request on its way to the upstream (already in the upstream's protocol): the settings
 * applied unless it names another model than the snapshot, and the outcome added to `stats`.
 */
export function settleRequest(stats: SettingsStats, protocol: Protocol, body: Json, m: SettingsModel): Json {
  if (typeof body.model === 'string' && body.model !== m.snapshot) {
    stats.otherModelRequests++;
    return body;
  }
  const r = applyGatewaySettings(protocol, body, m);
  stats.requests++;
  Object.assign(stats.applied, r.applied);
  stats.notApplicable = r.notApplicable;
  for (const [k, v] of Object.entries(r.overridden)) {
    const o = (stats.overridden[k] ??= { count: 0, agentSent: [] });
    o.count++;
    if (o.agentSent.length < 3 && !o.agentSent.some((x) => JSON.stringify(x) === JSON.stringify(v))) o.agentSent.push(v);
  }
  return r.body;
}
