import { join } from 'node:path';
import { statSync } from 'node:fs';
import { z } from 'zod';
import type { Json } from '../model/json';
import { ensureRoleSession } from './auth/session';
import { appUrl, artifactsDirOf, LoginAsSchema, roleForLogin, runStep, safeName, sanitizedDom, StepSchema, ViewportSchema, type BrowserStep } from './browser-common';
import { livePage, openLivePage } from './browser-live';
import { VarName } from './p04-http-request';
import { definePrimitive } from './types';

const Sel = z.string().min(1);

/** Steps beyond the shared browser steps: cookies, assertions on the page, screenshots. */
const ExtraStep = z.discriminatedUnion('action', [
  /** click when the element is there; nothing when it is not (an optional "Login with Email" button) */
  z.object({ action: z.literal('click_if_present'), selector: Sel }).strict(),
  /** wait until the network is idle, at most timeout_ms; never fails (pacing after a navigation) */
  z.object({ action: z.literal('wait_for_load'), state: z.enum(['load', 'domcontentloaded', 'networkidle']).default('networkidle'), timeout_ms: z.number().int().min(0).max(60_000).default(6000) }).strict(),
  /** a JPEG of the page in the node's artifacts, appended to `screenshots` */
  z.object({ action: z.literal('screenshot'), name: z.string().min(1) }).strict(),
  /** a cookie of the browser context into a chain variable (exported); fails when there is none */
  z.object({ action: z.literal('get_cookie'), name: z.string().min(1), store_as: VarName }).strict(),
  /** `value`, or `value_from`: a chain variable read when the step runs (a cookie kept by an earlier get_cookie of the same step) */
  z.object({ action: z.literal('set_cookie'), name: z.string().min(1), value: z.string().optional(), value_from: VarName.optional() }).strict(),
  z.object({ action: z.literal('clear_cookies') }).strict(),
  /** the page's current URL contains `value` */
  z.object({ action: z.literal('assert_url_contains'), value: z.string().min(1) }).strict(),
  z.object({ action: z.literal('assert_url_not_contains'), value: z.string().min(1) }).strict(),
  /** keyboard focus is on a visible element other than the page body (after Tab presses) */
  z.object({ action: z.literal('assert_focus_visible') }).strict(),
  /** the last navigation (url or goto) answered `status` */
  z.object({ action: z.literal('assert_status'), status: z.number().int().min(100).max(599) }).strict(),
]);
export const InteractStepSchema = z.union([StepSchema, ExtraStep]);
type InteractStep = z.infer<typeof InteractStepSchema>;

export const BrowserInteractSchema = z
  .object({
    /** first page; absent = start on a blank page (the steps navigate) */
    url: z.string().min(1).optional(),
    wait_until: z.enum(['load', 'domcontentloaded', 'networkidle', 'commit']).default('load'),
    timeout_ms: z.number().int().min(1000).max(180_000).default(30_000),
    settle_ms: z.number().int().min(0).max(60_000).default(0),
    viewport: ViewportSchema.default({ width: 1280, height: 800 }),
    wait_for_selector: Sel.optional(),
    steps: z.array(InteractStepSchema).max(80).default([]),
    login_as: LoginAsSchema.optional(),
    /** no session: a fresh browser without the chain role's cookies and headers (the steps may log in through a form) */
    anonymous: z.boolean().default(false),
    /** put the role's token (from its Authorization header) into this cookie, for SPAs that keep their token in a cookie */
    token_cookie: z.string().min(1).optional(),
    /** fake camera and microphone, granted (video-conferencing pages) */
    fake_media: z.boolean().default(false),
    /** go on in the page this chain already has open (its cookies, its state) instead of a fresh browser */
    continue: z.boolean().default(false),
    /** the final page's HTML must be longer than this */
    min_html_chars: z.number().int().min(0).default(0),
    /** fail when the final page's title reads like an error page (not found, server error, bad request) */
    fail_on_error_title: z.boolean().default(false),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!v.url && !v.steps.some((s) => s.action === 'goto')) {
      if (v.steps.some((s) => s.action !== 'screenshot' && s.action !== 'wait')) ctx.addIssue({ code: 'custom', path: ['url'], message: 'without url the steps must navigate (goto) before acting on the page' });
    }
    v.steps.forEach((s, i) => {
      if (s.action === 'set_cookie' && (s.value === undefined) === (s.value_from === undefined)) ctx.addIssue({ code: 'custom', path: ['steps', i], message: 'set_cookie takes exactly one of value and value_from' });
    });
    if (v.token_cookie && v.anonymous) ctx.addIssue({ code: 'custom', path: ['token_cookie'], message: 'token_cookie needs a session (anonymous is true)' });
  });

const ERROR_TITLES = ['not found', 'server error', 'page not found', 'bad request'];

/**
 * BROWSER_INTERACT: open a page in a fresh browser context (the chain's session unless
 * `anonymous`; with `continue`, the page the chain has open), run the steps in order, and keep
 * the page open for the rest of the chain
 * (DOM_ASSERT reads it). Passes when every step worked, the first page answered < 400, and the
 * optional content checks hold. Sets `last_page_url`, `last_page_title`, `rendered_dom`,
 * `rendered_dom_url` (chain-local) and the `store_as` names of get_cookie steps (exported).
 */
export const BROWSER_INTERACT = definePrimitive({
  id: 'BROWSER_INTERACT',
  name: 'browser_interact',
  schema: BrowserInteractSchema,
  produces: (i) => ({
    exported: Array.isArray(i.steps) ? (i.steps as { action?: unknown; store_as?: unknown }[]).filter((s) => s?.action === 'get_cookie' && typeof s.store_as === 'string').map((s) => s.store_as as string) : [],
    local: ['last_page_url', 'last_page_title', 'rendered_dom', 'rendered_dom_url', 'screenshots', 'last_screenshot'],
  }),
  async run(input, ctx) {
    let role: string | null | undefined = input.anonymous ? null : undefined;
    try {
      if (input.login_as && !input.anonymous) {
        role = roleForLogin(ctx, input.login_as);
        await ensureRoleSession(ctx, role);
      }
    } catch (e) {
      return { passed: false, message: `BROWSER_INTERACT: ${(e as Error).message}` };
    }
    const problems: string[] = [];
    const done: string[] = [];
    let live = input.continue ? livePage(ctx.state) : undefined;
    try {
      live ??= await openLivePage(ctx, { viewport: input.viewport, role, tokenCookie: input.token_cookie, fakeMedia: input.fake_media, timeoutMs: input.timeout_ms });
    } catch (e) {
      return { passed: false, message: `BROWSER_INTERACT: browser error: ${(e as Error).message.split('\n')[0]}` };
    }
    const { page, context } = live;
    const origin = new URL(ctx.env.baseUrl).origin;
    const navigate = async (raw: string) => {
      const url = appUrl(raw, ctx.env.baseUrl);
      const res = await page.goto(url, { waitUntil: input.wait_until, timeout: input.timeout_ms });
      live.status = res?.status() ?? null;
      return url;
    };
    try {
      if (input.url) {
        try {
          const url = await navigate(input.url);
          done.push(`${new URL(url).pathname} → ${live.status ?? '?'}`);
          if (live.status !== null && live.status >= 400) problems.push(`GET ${new URL(url).pathname} answered ${live.status}`);
        } catch (e) {
          problems.push(`navigation to ${input.url} failed: ${(e as Error).message.split('\n')[0]}`);
        }
      }
      if (input.wait_for_selector && !problems.length) {
        await page.waitForSelector(input.wait_for_selector, { timeout: input.timeout_ms }).catch(() => problems.push(`selector ${input.wait_for_selector} never appeared`));
      }
      for (const [i, s] of input.steps.entries()) {
        if (problems.length) break; // later steps act on a page that is not what they expect
        try {
          const note = await runInteractStep(s, { page, context, origin, navigate, ctx, live, artifacts: () => artifactsDirOf(ctx) });
          if (note) done.push(note);
        } catch (e) {
          problems.push(`step ${i + 1} (${s.action}) failed: ${(e as Error).message.split('\n')[0]}`);
        }
      }
      if (input.settle_ms) await page.waitForTimeout(input.settle_ms);
      const title = await page.title().catch(() => '');
      const html = ((await page.content().catch(() => '')) as string) ?? '';
      if (html.length <= input.min_html_chars) problems.push(`the page's HTML has ${html.length} characters (need > ${input.min_html_chars})`);
      if (input.fail_on_error_title && ERROR_TITLES.some((t) => title.toLowerCase().includes(t))) problems.push(`the page title reads like an error: ${JSON.stringify(title)}`);
      ctx.state.vars.last_page_url = page.url();
      ctx.state.vars.last_page_title = title;
      ctx.state.vars.rendered_dom = await sanitizedDom(page).catch(() => '');
      ctx.state.vars.rendered_dom_url = page.url();
      live.lastAtUse = ctx.state.last;
      return {
        passed: problems.length === 0,
        message: `${done.slice(-3).join('; ') || 'blank page'}; now at ${pathOf(page.url())}${title ? ` (title ${JSON.stringify(title.slice(0, 60))})` : ''}${problems.length ? `; ${problems.join('; ')}` : ''}`,
        data: { url: page.url(), title, html_chars: html.length, steps_done: done, problems },
      };
    } catch (e) {
      return { passed: false, message: `BROWSER_INTERACT: browser error: ${(e as Error).message.split('\n')[0]}`, data: { steps_done: done, problems } };
    }
  },
});

const pathOf = (u: string) => {
  try {
    const x = new URL(u);
    return x.protocol.startsWith('http') ? `${x.pathname}${x.search}` : u;
  } catch {
    return u;
  }
};

interface StepEnv {
  page: import('playwright-core').Page;
  context: import('playwright-core').BrowserContext;
  origin: string;
  navigate(url: string): Promise<string>;
  ctx: import('./types').PrimitiveContext;
  live: { status: number | null };
  artifacts(): string;
}

/** One step; returns a short note for the message, throws to fail the step. */
async function runInteractStep(s: InteractStep, e: StepEnv): Promise<string | undefined> {
  const { page, context } = e;
  switch (s.action) {
    case 'goto': {
      const url = await e.navigate(s.url);
      return `${pathOf(url)} → ${e.live.status ?? '?'}`;
    }
    case 'click_if_present':
      if ((await page.locator(s.selector).count()) > 0) await page.locator(s.selector).first().click({ timeout: 5000 });
      return undefined;
    case 'wait_for_load':
      await page.waitForLoadState(s.state, { timeout: s.timeout_ms }).catch(() => undefined);
      return undefined;
    case 'screenshot': {
      const file = join(e.artifacts(), `${safeName(s.name)}-${Date.now()}.jpg`);
      await page.screenshot({ path: file, type: 'jpeg', quality: 80, fullPage: true });
      const prev = e.ctx.state.vars.screenshots;
      if (statSync(file).size > 1024) {
        e.ctx.state.vars.screenshots = [...(Array.isArray(prev) ? (prev as Json[]) : []), file];
        e.ctx.state.vars.last_screenshot = file;
      }
      return `screenshot ${s.name}`;
    }
    case 'get_cookie': {
      const c = (await context.cookies()).find((x) => x.name === s.name);
      if (!c) throw new Error(`no cookie ${s.name} in the browser`);
      e.ctx.setVar(s.store_as, c.value);
      return `cookie ${s.name} kept as ${s.store_as}`;
    }
    case 'set_cookie': {
      const v = s.value ?? e.ctx.state.vars[s.value_from as string];
      if (v === undefined || v === null) throw new Error(`no variable ${s.value_from} to set cookie ${s.name} from`);
      await context.addCookies([{ name: s.name, value: String(v), url: e.origin }]);
      return undefined;
    }
    case 'clear_cookies':
      await context.clearCookies();
      return 'cookies cleared';
    case 'assert_url_contains':
      if (!page.url().includes(s.value)) throw new Error(`the page is at ${pathOf(page.url())}, which lacks ${JSON.stringify(s.value)}`);
      return `url contains ${s.value}`;
    case 'assert_url_not_contains':
      if (page.url().includes(s.value)) throw new Error(`the page is still at ${pathOf(page.url())}, which contains ${JSON.stringify(s.value)}`);
      return `url lacks ${s.value}`;
    case 'assert_focus_visible': {
      const ok = await page.evaluate(`(() => { const el = document.activeElement; if (!el || el === document.body || el === document.documentElement) return false; const st = getComputedStyle(el); const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none'; })()`);
      if (!ok) throw new Error('no visible element has the keyboard focus');
      return 'focus visible';
    }
    case 'assert_status':
      if (e.live.status !== s.status) throw new Error(`the last navigation answered ${e.live.status ?? 'nothing'}, expected ${s.status}`);
      return `status ${s.status}`;
    default:
      await runStep(page, s as BrowserStep, e.ctx.env.baseUrl, { timeout_ms: 15_000, wait_until: 'load', viewport: page.viewportSize() ?? { width: 1280, height: 800 } });
      return undefined;
  }
}
