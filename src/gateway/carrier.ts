/**
 * Keeping provider-bound reasoning round-trippable through an agent protocol that has no field
 * for it. Two ways, stateless first:
 *  - an **opaque slot** the agent echoes back verbatim: the Anthropic thinking `signature` and the
 *    Responses reasoning `encrypted_content`. The gateway puts there `sbgw1.` + base64url(JSON of
 *    the IrReasoning) and unpacks it when the agent sends the block back on the next turn. Real
 *    provider signatures never start with that prefix, so native ones pass through untouched.
 *  - a **keyed memory** for what has no slot: a Chat Completions agent cannot echo an Anthropic
 *    signature or a Responses blob, and only Chat has a place for a Gemini thought signature on a
 *    tool call. The gateway remembers them by tool-call id (or, for an assistant turn without tool
 *    calls, by a hash of its text) and restores them when that id/text comes back. The memory is
 *    per gateway instance (one per rollout), bounded, and lost on restart; a lost entry only
 *    costs the upstream its cached reasoning, never the conversation.
 */
import { createHash } from 'node:crypto';
import type { IrReasoning } from './ir';

const PREFIX = 'sbgw1.';

export function packCarrier(r: IrReasoning): string {
  return PREFIX + Buffer.from(JSON.stringify(r), 'utf8').toString('base64url');
}

/** The reasoning a carrier holds, or undefined when `s` is a provider's own opaque value. */
export function unpackCarrier(s: string | undefined | null): IrReasoning | undefined {
  if (typeof s !== 'string' || !s.startsWith(PREFIX)) return undefined;
  try {
    const r = JSON.parse(Buffer.from(s.slice(PREFIX.length), 'base64url').toString('utf8')) as IrReasoning;
    return typeof r === 'object' && r !== null && typeof r.origin === 'string' ? r : undefined;
  } catch {
    return undefined; // a damaged carrier degrades to "no reasoning", like a provider would reject it
  }
}

export interface CarriedTurn {
  reasoning: IrReasoning[];
  /** Gemini thought signatures by tool-call id */
  thoughtSignatures: Record<string, string>;
}

/** Remembers what an agent protocol could not hold, keyed by tool-call id or text hash. */
export class GatewayMemory {
  private turns = new Map<string, CarriedTurn>();
  constructor(private readonly max = 5000) {}

  static keyOf(toolCallIds: string[], text: string): string {
    return toolCallIds.length > 0 ? `call:${toolCallIds[0]}` : `text:${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
  }

  remember(key: string, turn: CarriedTurn): void {
    if (turn.reasoning.length === 0 && Object.keys(turn.thoughtSignatures).length === 0) return;
    this.turns.delete(key);
    this.turns.set(key, turn);
    // oldest first out: a rollout's early turns are the ones least likely to be replayed verbatim
    while (this.turns.size > this.max) this.turns.delete(this.turns.keys().next().value as string);
  }

  recall(key: string): CarriedTurn | undefined {
    return this.turns.get(key);
  }

  get size(): number {
    return this.turns.size;
  }
}
