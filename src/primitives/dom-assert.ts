import { z } from 'zod';
import type { Locator, Page } from 'playwright-core';
import { ensureRoleSession } from './auth/session';
import { acquirePageSlot, appUrl, LoginAsSchema, openAppContext, roleForLogin, sharedBrowser, ViewportSchema } from './browser-common';
import { livePage, openLivePage } from './browser-live';
import { show } from './compare';
import { definePrimitive, type PrimitiveContext } from './types';

const Sel = z.string().min(1);

export const DomAssertionSchema = z
  .object({
    /** a CSS selector (Playwright's engine: selector lists, :has-text(), [attr*=x i] …) */
    selector: Sel,
    /** true: at least one element matches (at least min_count); false: none does */
    exists: z.boolean().default(true),
    min_count: z.number().int().min(1).optional(),
    /** visible: some match is visible; hidden_or_faded: every match is hidden or drawn with opacity < 1 */
    visibility: z.enum(['visible', 'hidden_or_faded']).optional(),
    /** some matching element's text contains one of these */
    text_any: z.array(z.string().min(1)).min(1).optional(),
    case_insensitive: z.boolean().default(false),
    /** some matching element has this attribute (matching value_regex when given) */
    attribute: z.string().min(1).optional(),
    value_regex: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!v.exists && (v.min_count || v.visibility || v.text_any || v.attribute)) ctx.addIssue({ code: 'custom', path: ['exists'], message: 'exists: false takes no other condition' });
    if (v.value_regex && !v.attribute) ctx.addIssue({ code: 'custom', path: ['value_regex'], message: 'value_regex needs attribute' });
    if (v.value_regex) {
      try {
        new RegExp(v.value_regex);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['value_regex'], message: `not a valid regular expression: ${(e as Error).message}` });
      }
    }
  });
export type DomAssertion = z.infer<typeof DomAssertionSchema>;

export const DomAssertSchema = z
  .object({
    /** the page to check; absent = `source` decides */
    url: z.string().min(1).optional(),
    /**
     * without url — `page`: the page this chain's BROWSER_INTERACT left open; `last_response`: the
     * chain's last HTTP response body read as an HTML document (its scripts not run); `auto`: the
     * open page, unless an HTTP response arrived after it was last used (then that response)
     */
    source: z.enum(['auto', 'page', 'last_response']).default('auto'),
    assertions: z.array(DomAssertionSchema).max(50).default([]),
    /** one more assertion: the page's HTML source (the response body, or the open page's current HTML) contains one of these texts */
    source_contains_any: z.array(z.string().min(1)).min(1).optional(),
    /** all: every assertion must hold; any: one is enough */
    require: z.enum(['all', 'any']).default('all'),
    wait_until: z.enum(['load', 'domcontentloaded', 'networkidle', 'commit']).default('load'),
    timeout_ms: z.number().int().min(1000).max(180_000).default(20_000),
    settle_ms: z.number().int().min(0).max(60_000).default(800),
    viewport: ViewportSchema.default({ width: 1280, height: 800 }),
    wait_for_selector: Sel.optional(),
    login_as: LoginAsSchema.optional(),
    anonymous: z.boolean().default(false),
    token_cookie: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.url && v.source !== 'auto') ctx.addIssue({ code: 'custom', path: ['source'], message: 'source applies only without url' });
    if (!v.assertions.length && !v.source_contains_any) ctx.addIssue({ code: 'custom', path: ['assertions'], message: 'give assertions or source_contains_any' });
  });

/**
 * DOM_ASSERT: check elements of a page with CSS selectors in Chromium. With `url`, the chain's open
 * page (BROWSER_INTERACT's, keeping its cookies) goes there, or a new page opens in the chain's
 * session and stays open. Passes when every (or, with require any, some) assertion holds.
 */
export const DOM_ASSERT = definePrimitive({
  id: 'DOM_ASSERT',
  name: 'dom_assert',
  schema: DomAssertSchema,
  async run(input, ctx) {
    let page: Page | undefined;
    let where = '';
    let closeStatic: (() => Promise<void>) | undefined;
    let rawSource: string | undefined;
    try {
      if (input.url) {
        const url = appUrl(input.url, ctx.env.baseUrl);
        let live = livePage(ctx.state);
        if (!live) {
          let role: string | null | undefined = input.anonymous ? null : undefined;
          if (input.login_as && !input.anonymous) {
            role = roleForLogin(ctx, input.login_as);
            await ensureRoleSession(ctx, role);
          }
          live = await openLivePage(ctx, { viewport: input.viewport, role, tokenCookie: input.token_cookie, timeoutMs: input.timeout_ms });
        }
        page = live.page;
        const res = await page.goto(url, { waitUntil: input.wait_until, timeout: input.timeout_ms });
        live.status = res?.status() ?? null;
        live.lastAtUse = ctx.state.last;
        if (live.status !== null && live.status >= 400) return { passed: false, message: `GET ${new URL(url).pathname} answered ${live.status}`, data: { url } };
        if (input.wait_for_selector) await page.waitForSelector(input.wait_for_selector, { timeout: input.timeout_ms }).catch(() => undefined);
        if (input.settle_ms) await page.waitForTimeout(input.settle_ms);
        where = new URL(url).pathname;
      } else {
        const live = livePage(ctx.state);
        const useResponse = input.source === 'last_response' || (input.source === 'auto' && (!live || (ctx.state.last !== undefined && ctx.state.last !== live.lastAtUse)));
        if (!useResponse) {
          if (!live) return { passed: false, message: 'no page is open in this chain (a BROWSER_INTERACT step opens one)' };
          page = live.page;
          where = `the open page (${safePath(page.url())})`;
        } else {
          const last = ctx.state.last;
          if (!last) return { passed: false, message: 'no page is open and the chain has no HTTP response to read as HTML' };
          const html = typeof last.body === 'string' ? last.body : JSON.stringify(last.body ?? '');
          rawSource = html;
          const opened = await staticDocument(ctx, html, input.viewport);
          page = opened.page;
          closeStatic = opened.close;
          where = `the response of ${last.method} ${last.path} (${last.status})`;
        }
      }
      const results = [];
      for (const a of input.assertions) results.push(await check(page, a));
      if (input.source_contains_any) {
        const src = rawSource ?? (await page.content());
        const hit = input.source_contains_any.find((t) => src.includes(t));
        results.push({ selector: '(source)', ok: hit !== undefined, count: hit ? 1 : 0, why: hit ? `contains ${show(hit)}` : `the source contains none of ${show(input.source_contains_any)}` });
      }
      const ok = results.filter((r) => r.ok).length;
      const passed = input.require === 'all' ? ok === results.length : ok > 0;
      const failed = results.filter((r) => !r.ok);
      return {
        passed,
        message: `${ok}/${results.length} DOM assertion(s) hold on ${where}${input.require === 'any' ? ' (one needed)' : ''}${failed.length ? `; ${failed.slice(0, 3).map((f) => `${show(f.selector)}: ${f.why}`).join('; ')}` : ''}`,
        data: { where, results },
      };
    } catch (e) {
      return { passed: false, message: `DOM_ASSERT: ${(e as Error).message.split('\n')[0]}` };
    } finally {
      await closeStatic?.();
    }
  },
});

const safePath = (u: string) => {
  try {
    return new URL(u).pathname;
  } catch {
    return u;
  }
};

/** The HTML of a response in a page without scripts or network (only the document itself). */
async function staticDocument(ctx: PrimitiveContext, html: string, viewport: { width: number; height: number }): Promise<{ page: Page; close: () => Promise<void> }> {
  const release = await acquirePageSlot();
  const browser = await (ctx.env.browser ?? sharedBrowser)();
  const context = await openAppContext(ctx, browser, { viewport, role: null, javaScriptEnabled: false });
  try {
    await context.route('**/*', (r) => r.abort('blockedbyclient'));
    const page = await context.newPage();
    await page.setContent(html, { waitUntil: 'domcontentloaded', timeout: 15_000 });
    return { page, close: async () => { await context.close().catch(() => undefined); release(); } };
  } catch (e) {
    await context.close().catch(() => undefined);
    release();
    throw e;
  }
}

interface Checked {
  selector: string;
  ok: boolean;
  count: number;
  why: string;
}

async function check(page: Page, a: DomAssertion): Promise<Checked> {
  const loc = page.locator(a.selector);
  let count: number;
  try {
    count = await loc.count();
  } catch (e) {
    return { selector: a.selector, ok: false, count: 0, why: `invalid selector: ${(e as Error).message.split('\n')[0]}` };
  }
  const r = (ok: boolean, why: string): Checked => ({ selector: a.selector, ok, count, why });
  if (!a.exists) return r(count === 0, count === 0 ? 'absent' : `${count} element(s) match (expected none)`);
  const need = a.min_count ?? 1;
  if (count < need) return r(false, count === 0 ? 'no element matches' : `${count} element(s) match (need ≥ ${need})`);
  const all = await loc.all();
  if (a.visibility === 'visible' && !(await someAsync(all, (l) => l.isVisible()))) return r(false, `${count} match(es), none visible`);
  if (a.visibility === 'hidden_or_faded') {
    const shown = await someAsync(all, async (l) => (await l.isVisible()) && (await opacity(l)) >= 1);
    if (shown) return r(false, 'an element is fully visible');
  }
  if (a.text_any) {
    const norm = (s: string) => (a.case_insensitive ? s.toLowerCase() : s);
    const texts = await Promise.all(all.map((l) => l.textContent().then((t) => norm(t ?? '')).catch(() => '')));
    if (!texts.some((t) => a.text_any!.some((w) => t.includes(norm(w))))) return r(false, `no match's text contains ${a.text_any.map((t) => JSON.stringify(t)).join(' or ')}`);
  }
  if (a.attribute) {
    const re = a.value_regex ? new RegExp(a.value_regex) : undefined;
    const values = await Promise.all(all.map((l) => l.getAttribute(a.attribute!).catch(() => null)));
    if (!values.some((v) => v !== null && (!re || re.test(v)))) return r(false, `no match has ${a.attribute}${re ? ` matching /${a.value_regex}/` : ''} (values: ${values.slice(0, 3).map((v) => JSON.stringify(v)).join(', ')})`);
  }
  return r(true, `${count} match(es)`);
}

async function someAsync<T>(xs: T[], f: (x: T) => Promise<boolean>): Promise<boolean> {
  for (const x of xs) if (await f(x).catch(() => false)) return true;
  return false;
}

/** The element's effective opacity (its own times its ancestors'). */
function opacity(l: Locator): Promise<number> {
  // runs in the page (this project compiles without the DOM typings, hence the `any`s)
  return l.evaluate((el: any) => {
    let o = 1;
    for (let n = el; n; n = n.parentElement) o *= Number((globalThis as any).getComputedStyle(n).opacity || '1');
    return o;
  });
}
