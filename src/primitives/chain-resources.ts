import type { ChainState } from './types';

/**
 * Resources a chain holds across its steps (the chain's live browser page) and releases when the
 * chain ends, passed or not. Keyed by the chain's state object, so nothing outlives the chain.
 */
/** the resource name of the chain's live browser page (browser-live.ts) */
export const CHAIN_BROWSER = 'browser';

const closers = new WeakMap<ChainState, Map<string, () => Promise<void>>>();

/** Register (or replace) the closer of a named resource of this chain. */
export function holdForChain(state: ChainState, name: string, close: () => Promise<void>): void {
  let m = closers.get(state);
  if (!m) closers.set(state, (m = new Map()));
  m.set(name, close);
}

/** Close one named resource now (a step that replaces it), if the chain holds it. */
export async function releaseOne(state: ChainState, name: string): Promise<void> {
  const m = closers.get(state);
  const close = m?.get(name);
  if (!close) return;
  m!.delete(name);
  await close().catch(() => undefined);
}

/** Close everything the chain holds (run-chain calls this when the node's chain is over). */
export async function releaseChain(state: ChainState): Promise<void> {
  const m = closers.get(state);
  if (!m) return;
  closers.delete(state);
  await Promise.all([...m.values()].map((c) => c().catch(() => undefined)));
}
