/**
 * The model registry (models.json beside this file, plus an optional overlay file named by
 * SAASBENCH_MODELS_FILE whose providers/models are merged over it): exact snapshot ids and the
 * paper's sampling settings per model, and which upstream provider serves it. Unknown models are a
 * configuration error: a benchmark run must say exactly what it ran.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentConfigError } from '../errors';
import BUILTIN from './models.json';
import { zodIssueText } from '../zod-issues';
import type { Protocol } from '../gateway';
import { PriceSchema } from './metering';
import { gatewayPlan } from './gateway-settings';
import { GovernorLimitsSchema } from '../model/governor';

export const ProviderSchema = z
  .object({
    /** the wire protocol: Anthropic Messages, OpenAI Responses, or OpenAI Chat Completions */
    api: z.enum(['anthropic', 'openai', 'openai-chat']),
    baseUrlEnv: z.string().min(1),
    defaultBaseUrl: z.string().url().optional(),
    keyEnv: z.array(z.string().min(1)).min(1),
    auth: z.enum(['x-api-key', 'bearer']),
    /** rate governor limits for the whole cluster (docs/gateway.md "Rate governor"); SAASBENCH_RATE_LIMITS overrides */
    limits: GovernorLimitsSchema.optional(),
  })
  .strict();

export const ModelSchema = z
  .object({
    snapshot: z.string().min(1),
    provider: z.string().min(1),
    reasoning: z.boolean().default(false),
    temperature: z.number().min(0).max(2).default(0),
    thinking: z
      .object({
        enabled: z.boolean(),
        /** Anthropic-API thinking mode: "adaptive" (Claude Opus 4.6+, what Claude Code sends) or "enabled" (with budgetTokens when set) */
        type: z.enum(['adaptive', 'enabled']).optional(),
        includeThoughts: z.boolean().optional(),
        budgetTokens: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
    /** Responses-API reasoning summary (Codex model_reasoning_summary) */
    reasoningSummary: z.enum(['auto', 'concise', 'detailed', 'none']).optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    /** dated list price (src/agents/metering.ts); absent: cost is null with the reason below */
    price: PriceSchema.optional(),
    /** why the registry has no price for this model (shown as the reason of a null cost) */
    priceUnknown: z.string().min(1).optional(),
    /** JSON fields the gateway merges into every model request body, after the settings (an escape hatch; default none) */
    relayBodyOverrides: z.record(z.string(), z.unknown()).optional(),
    verified: z.boolean().default(false),
    /** the published fact the snapshot id was checked against (required reading before setting verified) */
    verifiedBy: z.string().min(1).optional(),
  })
  .strict();

const RegistrySchema = z
  .object({
    $comment: z.string().optional(),
    providers: z.record(z.string(), ProviderSchema).default({}),
    models: z.record(z.string(), ModelSchema).default({}),
  })
  .strict();

export type Provider = z.infer<typeof ProviderSchema>;
export type ModelEntry = z.infer<typeof ModelSchema>;
export type ModelApi = Provider['api'];

export interface ResolvedModel extends ModelEntry {
  id: string;
  providerName: string;
  providerConfig: Provider;
}

export function loadRegistry(): z.infer<typeof RegistrySchema> {
  const base = RegistrySchema.parse(BUILTIN);
  const overlayFile = process.env.SAASBENCH_MODELS_FILE;
  if (!overlayFile) return base;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(overlayFile, 'utf8'));
  } catch (err) {
    throw new AgentConfigError(`SAASBENCH_MODELS_FILE=${overlayFile}: ${(err as Error).message}`);
  }
  const r = RegistrySchema.safeParse(raw);
  if (!r.success) throw new AgentConfigError(`SAASBENCH_MODELS_FILE=${overlayFile}: ${zodIssueText(r.error)}`);
  return { providers: { ...base.providers, ...r.data.providers }, models: { ...base.models, ...r.data.models } };
}

export function resolveModel(id: string): ResolvedModel {
  const reg = loadRegistry();
  const m = reg.models[id];
  if (!m) throw new AgentConfigError(`model "${id}" is not in the model registry (src/agents/models.json${process.env.SAASBENCH_MODELS_FILE ? ` + ${process.env.SAASBENCH_MODELS_FILE}` : ''}); known: ${Object.keys(reg.models).join(', ')}`);
  const p = reg.providers[m.provider];
  if (!p) throw new AgentConfigError(`model "${id}": unknown provider "${m.provider}"`);
  return { ...m, id, providerName: m.provider, providerConfig: p };
}

/** The gateway's protocol (src/gateway) of each provider API. */
export const PROTOCOL_OF_API: Readonly<Record<ModelApi, Protocol>> = { anthropic: 'anthropic', openai: 'responses', 'openai-chat': 'chat' };

/** The provider APIs the relay translates to and from (docs/gateway.md): every API of the registry. */
export const GATEWAY_APIS: readonly ModelApi[] = ['anthropic', 'openai', 'openai-chat'];

/**
 * Refuse a model served over an API that neither the agent's client speaks (the driver's modelApis)
 * nor the relay translates to. Since the relay became the gateway this refuses only an API added to
 * the registry without a gateway translation.
 */
export function checkAgentModel(agent: { name: string; modelApis?: readonly ModelApi[] }, m: ResolvedModel): void {
  const apis = agent.modelApis;
  const api = m.providerConfig.api;
  if (apis && !apis.includes(api) && !GATEWAY_APIS.includes(api)) {
    throw new AgentConfigError(`model "${m.id}" is served over the ${api} API (provider ${m.providerName}) but ${agent.name} speaks ${apis.join('/')} and the relay does not translate ${api}`);
  }
}

export interface Upstream {
  baseUrl: string;
  /** the real API key: lives in the worker process only, injected by the relay */
  key: string;
  auth: Provider['auth'];
  keyEnv: string;
  /**
   * The upstream's wire protocol. Set: the relay translates requests of another protocol (from
   * their path) into this one (src/agents/llm-relay-translate.ts). Unset: everything passes through.
   */
  protocol?: Protocol;
}

/** The upstream of a provider from the worker's environment. */
export function upstreamOf(m: ResolvedModel): Upstream {
  const p = m.providerConfig;
  const baseUrl = process.env[p.baseUrlEnv]?.trim() || p.defaultBaseUrl;
  if (!baseUrl) throw new AgentConfigError(`provider ${m.providerName}: set ${p.baseUrlEnv} (no default base URL)`);
  const keyEnv = p.keyEnv.find((k) => process.env[k]);
  if (!keyEnv) throw new AgentConfigError(`provider ${m.providerName}: no API key in the worker environment (set ${p.keyEnv.join(' or ')})`);
  return { baseUrl: baseUrl.replace(/\/+$/, ''), key: process.env[keyEnv]!, auth: p.auth, keyEnv, protocol: PROTOCOL_OF_API[p.api] };
}

/**
 * The registry's settings as they reach the model, recorded per rollout (model-settings.json) so a
 * report says what actually applied. The gateway applies them to every request
 * (src/agents/gateway-settings.ts): `appliedAtGateway` (upstream field names), and `notApplied`
 * only what has no field in the upstream's protocol. `agentConfig` is what the agent's own
 * configuration carries and `agentCannotSet` what its CLI has no setting for (Claude Code and Codex
 * send no temperature) — both set at the gateway anyway.
 */
export function settingsRecord(agent: string, m: ResolvedModel, applied: Record<string, unknown>, agentCannotSet: string[]): Record<string, unknown> {
  const plan = gatewayPlan(PROTOCOL_OF_API[m.providerConfig.api], m);
  return {
    agent,
    model: m.id,
    snapshot: m.snapshot,
    provider: m.providerName,
    api: m.providerConfig.api,
    registry: { reasoning: m.reasoning, temperature: m.temperature, thinking: m.thinking ?? null, reasoningEffort: m.reasoningEffort ?? null, reasoningSummary: m.reasoningSummary ?? null, maxOutputTokens: m.maxOutputTokens ?? null, verified: m.verified },
    appliedAt: 'gateway',
    appliedAtGateway: plan.applied,
    applied,
    agentCannotSet,
    notApplied: plan.notApplicable,
  };
}
