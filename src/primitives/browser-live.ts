import type { BrowserContext, Page } from 'playwright-core';
import { CHAIN_BROWSER, holdForChain, releaseOne } from './chain-resources';
import { acquirePageSlot, openAppContext, sharedBrowser, type AppContextOptions } from './browser-common';
import type { ChainState, LastResponse, PrimitiveContext } from './types';

/**
 * The chain's browser: BROWSER_INTERACT opens a page and leaves it open so that later steps of
 * the same chain (DOM_ASSERT, another BROWSER_INTERACT continuing) see the page as the steps left
 * it — logged in through a form, after clicks. It is closed when the chain ends (run-chain), or
 * when a step of the chain opens another browser page (a chain holds at most one page slot, so
 * chains waiting for slots can never deadlock).
 */
export interface LivePage {
  context: BrowserContext;
  page: Page;
  /** status of the last navigation (null when none answered) */
  status: number | null;
  /** the chain's last HTTP response when the page was last used (newer responses win in DOM_ASSERT's `auto`) */
  lastAtUse: LastResponse | undefined;
}

const LIVE = CHAIN_BROWSER;
/** a page nobody closed (a chain run outside run-chain) gives its slot back after this long */
const MAX_LIFETIME_MS = 15 * 60_000;
const live = new WeakMap<ChainState, LivePage>();

export function livePage(state: ChainState): LivePage | undefined {
  const l = live.get(state);
  return l && !l.page.isClosed() ? l : undefined;
}

/** Close the chain's page, if any (before a step opens another one). */
export async function closeLivePage(state: ChainState): Promise<void> {
  live.delete(state);
  await releaseOne(state, LIVE);
}

/** Open a fresh context + page for this chain (closing the previous one) and keep it for later steps. */
export async function openLivePage(ctx: PrimitiveContext, o: AppContextOptions & { timeoutMs: number }): Promise<LivePage> {
  await closeLivePage(ctx.state);
  const release = await acquirePageSlot();
  let context: BrowserContext | undefined;
  try {
    const browser = await (ctx.env.browser ?? sharedBrowser)();
    context = await openAppContext(ctx, browser, o);
    const page = await context.newPage();
    page.setDefaultTimeout(Math.min(o.timeoutMs, 10_000));
    const l: LivePage = { context, page, status: null, lastAtUse: ctx.state.last };
    live.set(ctx.state, l);
    const c = context;
    const close = async () => {
      clearTimeout(reaper);
      try {
        await c.close();
      } finally {
        release();
      }
    };
    const reaper = setTimeout(() => void close().catch(() => undefined), MAX_LIFETIME_MS);
    reaper.unref();
    holdForChain(ctx.state, LIVE, close);
    return l;
  } catch (e) {
    await context?.close().catch(() => undefined);
    release();
    throw e;
  }
}
