import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes (registered by temporal-dev.yml / `saasbench server`). */
export const SA = {
  task: defineSearchAttributeKey('SaasbenchTask', SearchAttributeType.KEYWORD),
  agent: defineSearchAttributeKey('SaasbenchAgent', SearchAttributeType.KEYWORD),
  model: defineSearchAttributeKey('SaasbenchModel', SearchAttributeType.KEYWORD),
  sweep: defineSearchAttributeKey('SaasbenchSweep', SearchAttributeType.KEYWORD),
  phase: defineSearchAttributeKey('SaasbenchPhase', SearchAttributeType.KEYWORD),
  score: defineSearchAttributeKey('SaasbenchScore', SearchAttributeType.DOUBLE),
  /** the rollout's gateway-metered model cost in USD (set only when known; docs/gateway.md "Metering") */
  costUsd: defineSearchAttributeKey('SaasbenchCostUsd', SearchAttributeType.DOUBLE),
};
