import { AgentConfigError } from '../errors';
import { claudeCodeAgent } from './claude-code';
import { codexAgent } from './codex';
import { noopAgent } from './noop';
import { openhandsAgent } from './openhands';
import { oracleAgent } from './oracle';
import type { AgentDriver } from './types';

/**
 * The agent registry. Adding an agent is one folder (src/agents/<name>/ exporting its AgentDriver:
 * its model APIs, CLI pin, preinstall, transcript file, launch and parsing) plus one line here;
 * nothing else in the project switches on agent names (docs/agents.md).
 */
const AGENTS: Record<string, AgentDriver> = {
  [noopAgent.name]: noopAgent,
  [oracleAgent.name]: oracleAgent,
  [claudeCodeAgent.name]: claudeCodeAgent,
  [codexAgent.name]: codexAgent,
  [openhandsAgent.name]: openhandsAgent,
};

export function agentNames(): string[] {
  return Object.keys(AGENTS);
}

export function createAgent(name: string): AgentDriver {
  const a = AGENTS[name];
  if (!a) throw new AgentConfigError(`unknown agent "${name}" (known: ${agentNames().join(', ')})`);
  return a;
}
