import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { z } from 'zod';
import { RoleError } from './auth/provider';
import { ensureRoleSession, sessionCookies, sessionHeaders } from './auth/session';
import { CHAIN_BROWSER, releaseOne } from './chain-resources';
import type { PrimitiveContext } from './types';
import { isLoopbackHost } from '../net-address';

/** Debian's Chromium, driven by playwright-core; never a downloaded browser. */
export const CHROMIUM_PATH = process.env.SAASBENCH_CHROMIUM ?? '/usr/bin/chromium';
/** Playwright gives every launch a fresh temporary profile (it rejects --user-data-dir with launch()). */
// fake media devices: a page that is granted camera/microphone (BROWSER_INTERACT fake_media) gets test streams, no prompt
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--use-fake-device-for-media-stream'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true, timeout: 60_000 });
}

let shared: Promise<Browser> | undefined;
/** One Chromium per process, launched on first use and relaunched if it died. */
export function sharedBrowser(): Promise<Browser> {
  if (shared) {
    const p = shared;
    return p.then((b) => {
      if (b.isConnected()) return b;
      if (shared === p) shared = undefined;
      return sharedBrowser();
    });
  }
  const p = launchChromium();
  shared = p;
  p.catch(() => {
    if (shared === p) shared = undefined;
  });
  // Playwright kills the browsers it launched when this process exits; closeSharedBrowser() is for an orderly stop.
  return p;
}

/** Close the process-wide browser (tests, worker shutdown). */
export async function closeSharedBrowser(): Promise<void> {
  const p = shared;
  shared = undefined;
  if (p) await p.then((b) => b.close()).catch(() => undefined);
}

// pages open at once in this process (a page of a modern SPA easily takes 200 MB)
let open = 0;
const queue: (() => void)[] = [];
/** Wait for a page slot; the returned function gives it back (once). */
export async function acquirePageSlot(): Promise<() => void> {
  const max = Number(process.env.SAASBENCH_BROWSER_PAGES ?? 2);
  while (open >= max) await new Promise<void>((r) => queue.push(r));
  open++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    open--;
    queue.shift()?.();
  };
}
async function withPageSlot<T>(fn: () => Promise<T>): Promise<T> {
  const release = await acquirePageSlot();
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * Published DAGs write absolute URLs of their own fixed port (`http://localhost:8020/x`); ours
 * are per-rollout. A path, or an absolute URL on a loopback host (any port) or on the app's
 * host, is mapped onto the app's base URL. Anything else is refused: the evaluator never browses
 * other hosts.
 */
export function appUrl(raw: string, baseUrl: string): string {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/$/, '');
  if (raw.startsWith('/')) return `${base.origin}${prefix}${raw}`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`url ${JSON.stringify(raw)} is neither a path nor an absolute URL`);
  }
  if (!isLoopbackHost(u.hostname) && u.hostname !== base.hostname) throw new Error(`url ${raw} is not the app under test (only paths and loopback URLs are browsed)`);
  return `${base.origin}${prefix}${u.pathname}${u.search}${u.hash}`;
}

export const ViewportSchema = z.object({ width: z.number().int().min(200).max(4000), height: z.number().int().min(200).max(10_000) }).strict();

const Sel = z.string().min(1);
export const StepSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('goto'), url: z.string().min(1) }).strict(),
  z.object({ action: z.literal('click'), selector: Sel }).strict(),
  z.object({ action: z.literal('fill'), selector: Sel, value: z.string() }).strict(),
  z.object({ action: z.literal('wait'), ms: z.number().int().min(0).max(60_000) }).strict(),
  z.object({ action: z.literal('wait_for_selector'), selector: Sel }).strict(),
  z.object({ action: z.literal('set_viewport'), width: z.number().int().min(200).max(4000), height: z.number().int().min(200).max(10_000) }).strict(),
  z.object({ action: z.literal('press_key'), key: z.string().min(1).default('Escape'), selector: Sel.optional() }).strict(),
  z.object({ action: z.literal('press'), key: z.string().min(1).default('Escape'), selector: Sel.optional() }).strict(),
  z.object({ action: z.literal('key'), key: z.string().min(1).default('Escape'), selector: Sel.optional() }).strict(),
  z.object({ action: z.literal('eval_js'), script: z.string().min(1) }).strict(),
  z.object({ action: z.literal('evaluate'), script: z.string().min(1) }).strict(),
  /** move the pointer (default: the middle of the viewport), e.g. to reveal an auto-hiding toolbar */
  z.object({ action: z.literal('mouse_move'), x: z.number().min(0).optional(), y: z.number().min(0).optional() }).strict(),
]);
export type BrowserStep = z.infer<typeof StepSchema>;

/**
 * `login_as`: browse with a declared role's session — its cookies go into the browser context and
 * its headers into every request. `{role}` names the role; the published `{username, password,
 * base_url}` form is mapped to the declared role whose username it is (password and base_url are
 * then not needed: credentials come from the role declaration, and the base URL is the app's).
 */
export const LoginAsSchema = z.union([
  z.object({ role: z.string().min(1) }).strict(),
  z.object({ username: z.string().min(1), password: z.string().optional(), base_url: z.string().optional() }).strict(),
]);

/**
 * A form login in the browser before the page is opened: go to `url`, fill the first of
 * `username_selectors` / `password_selectors` that exists, click the first of `submit_selectors`
 * that exists, and wait for the page to settle. A field or button that is not there fails the step.
 */
export const FormLoginSchema = z
  .object({
    url: z.string().min(1),
    username: z.string(),
    password: z.string(),
    username_selectors: z.array(Sel).min(1),
    password_selectors: z.array(Sel).min(1),
    submit_selectors: z.array(Sel).min(1),
  })
  .strict();
export type FormLogin = z.infer<typeof FormLoginSchema>;

export const NavigationFields = {
  url: z.string().min(1),
  wait_until: z.enum(['load', 'domcontentloaded', 'networkidle', 'commit']).default('load'),
  timeout_ms: z.number().int().min(1000).max(180_000).default(15_000),
  settle_ms: z.number().int().min(0).max(60_000).default(800),
  viewport: ViewportSchema.default({ width: 1440, height: 900 }),
  wait_for_selector: Sel.optional(),
  steps: z.array(StepSchema).max(50).default([]),
  login_as: LoginAsSchema.optional(),
  /** browse without the chain's session (no role cookies or headers) */
  anonymous: z.boolean().default(false),
  form_login: FormLoginSchema.optional(),
};

export interface NavInput {
  url: string;
  wait_until: 'load' | 'domcontentloaded' | 'networkidle' | 'commit';
  timeout_ms: number;
  settle_ms: number;
  viewport: { width: number; height: number };
  wait_for_selector?: string;
  steps: BrowserStep[];
  login_as?: z.infer<typeof LoginAsSchema>;
  anonymous?: boolean;
  form_login?: FormLogin;
}

export interface PageVisit {
  url: string;
  status: number | null;
  title: string;
  /** problems that make the step fail (navigation status, missing selector, failing step) */
  problems: string[];
  notes: string[];
}

/** Which role a `login_as` means, or why none does. */
export function roleForLogin(ctx: PrimitiveContext, l: z.infer<typeof LoginAsSchema>): string {
  if ('role' in l) return l.role;
  const roles = ctx.env.roles;
  const match = roles?.declared().find((r) => roles.usernameOf(r, ctx.state.vars) === l.username);
  if (!match) throw new RoleError(`login_as ${l.username}: no declared role has that username (declared: ${roles?.declared().join(', ') || 'none'}); see docs/compatibility.md#auth`);
  return match;
}

/**
 * Open a page in a fresh browser context, in the chain's session (or `login_as`'s role), run the
 * steps and settle; then `capture` reads what it needs before the context is closed. Requests to
 * any origin other than the app are aborted. A watchdog closes the context when the whole visit
 * overruns (no host-wide process killing).
 */
export async function visit<T>(ctx: PrimitiveContext, input: NavInput, capture: (page: Page, v: PageVisit) => Promise<T>): Promise<{ visit: PageVisit; result?: T; fatal?: string }> {
  const v: PageVisit = { url: '', status: null, title: '', problems: [], notes: [] };
  let role = ctx.state.auth?.role;
  try {
    v.url = appUrl(input.url, ctx.env.baseUrl);
    if (input.login_as) {
      role = roleForLogin(ctx, input.login_as);
      await ensureRoleSession(ctx, role);
    }
  } catch (e) {
    return { visit: v, fatal: (e as Error).message };
  }
  // a page BROWSER_INTERACT left open holds this chain's slot: give it back before waiting for one
  await releaseOne(ctx.state, CHAIN_BROWSER);
  return withPageSlot(async () => {
    const browser = await (ctx.env.browser ?? sharedBrowser)();
    let context: BrowserContext | undefined;
    const budget = input.timeout_ms * 2 + input.settle_ms + input.steps.reduce((a, s) => a + (s.action === 'wait' ? s.ms : 5000), 0) + (input.form_login ? input.timeout_ms + 10_000 : 0) + 15_000;
    let overran = false;
    const watchdog = setTimeout(() => {
      overran = true;
      void context?.close().catch(() => undefined);
    }, budget);
    try {
      context = await openAppContext(ctx, browser, { viewport: input.viewport, role: input.anonymous ? null : role });
      const page = await context.newPage();
      page.setDefaultTimeout(Math.min(input.timeout_ms, 10_000));
      if (input.form_login) {
        const problem = await formLogin(page, input.form_login, ctx.env.baseUrl, input.timeout_ms);
        if (problem) v.problems.push(problem);
      }
      try {
        const res = await page.goto(v.url, { waitUntil: input.wait_until, timeout: input.timeout_ms });
        v.status = res?.status() ?? null;
        if (v.status !== null && v.status >= 400) v.problems.push(`GET ${new URL(v.url).pathname} answered ${v.status}`);
      } catch (e) {
        const msg = (e as Error).message.split('\n')[0];
        if (/net::ERR_/.test(msg)) return { visit: v, fatal: `navigation to ${v.url} failed: ${msg}` };
        v.problems.push(`navigation to ${v.url} did not reach "${input.wait_until}" within ${input.timeout_ms} ms: ${msg}`);
      }
      if (input.wait_for_selector) {
        try {
          await page.waitForSelector(input.wait_for_selector, { timeout: input.timeout_ms });
        } catch {
          v.problems.push(`selector ${input.wait_for_selector} never appeared`);
        }
      }
      for (const [i, s] of input.steps.entries()) {
        try {
          await runStep(page, s, ctx.env.baseUrl, input);
        } catch (e) {
          v.problems.push(`step ${i + 1} (${s.action}) failed: ${(e as Error).message.split('\n')[0]}`);
        }
      }
      if (input.settle_ms) await page.waitForTimeout(input.settle_ms);
      v.title = await page.title().catch(() => '');
      const result = await capture(page, v);
      return { visit: v, result };
    } catch (e) {
      return { visit: v, fatal: overran ? `browser visit overran ${budget} ms and was stopped` : `browser error: ${(e as Error).message.split('\n')[0]}` };
    } finally {
      clearTimeout(watchdog);
      await context?.close().catch(() => undefined);
    }
  });
}

export interface AppContextOptions {
  viewport: { width: number; height: number };
  /** whose session the context carries: a role name, undefined = the chain's current role, null = none */
  role?: string | null;
  /** a cookie that receives the role's bearer/token credential (an SPA reading its token from a cookie) */
  tokenCookie?: string;
  /** fake camera and microphone, granted (video-conferencing pages) */
  fakeMedia?: boolean;
  javaScriptEnabled?: boolean;
}

/**
 * A fresh browser context on the app: requests to any other origin are aborted; the session's
 * cookies and headers (unless `role: null`) are installed.
 */
export async function openAppContext(ctx: PrimitiveContext, browser: Browser, o: AppContextOptions): Promise<BrowserContext> {
  const origin = new URL(ctx.env.baseUrl).origin;
  const role = o.role === null ? null : (o.role ?? ctx.state.auth?.role);
  const cookies = role === null ? [] : sessionCookies(ctx.state, role);
  const headers = role === null ? {} : sessionHeaders(ctx.state, role);
  const context = await browser.newContext({ viewport: o.viewport, ignoreHTTPSErrors: true, serviceWorkers: 'block', javaScriptEnabled: o.javaScriptEnabled ?? true, ...(o.fakeMedia ? { permissions: ['camera', 'microphone'] } : {}) });
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    return route.abort('blockedbyclient');
  });
  if (cookies.length) await context.addCookies(cookies.map((c) => ({ name: c.name, value: c.value, url: `${origin}${c.path}`, ...(c.expires ? { expires: Math.floor(c.expires / 1000) } : {}) })));
  if (Object.keys(headers).length) await context.setExtraHTTPHeaders(headers);
  if (o.tokenCookie) {
    const auth = Object.entries(headers).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
    const token = auth?.trim().split(/\s+/).pop();
    if (token) await context.addCookies([{ name: o.tokenCookie, value: token, url: origin }]);
  }
  return context;
}

/** The form login of FormLoginSchema; returns a problem, or undefined when it was done. */
export async function formLogin(page: Page, l: FormLogin, baseUrl: string, timeoutMs: number): Promise<string | undefined> {
  try {
    await page.goto(appUrl(l.url, baseUrl), { waitUntil: 'domcontentloaded', timeout: timeoutMs });
  } catch (e) {
    return `form login: ${l.url} did not load: ${(e as Error).message.split('\n')[0]}`;
  }
  const first = async (sels: string[]) => {
    for (const s of sels) if ((await page.locator(s).count().catch(() => 0)) > 0) return page.locator(s).first();
    return undefined;
  };
  const user = await first(l.username_selectors);
  const pass = await first(l.password_selectors);
  const submit = await first(l.submit_selectors);
  if (!user || !pass || !submit) return `form login at ${l.url}: no ${!user ? 'username field' : !pass ? 'password field' : 'submit button'} (${(!user ? l.username_selectors : !pass ? l.password_selectors : l.submit_selectors).join(' | ')})`;
  try {
    await user.fill(l.username, { timeout: 5000 });
    await pass.fill(l.password, { timeout: 5000 });
    await submit.click({ timeout: 5000 });
    await page.waitForLoadState('networkidle', { timeout: Math.min(timeoutMs, 10_000) }).catch(() => undefined);
  } catch (e) {
    return `form login at ${l.url} failed: ${(e as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

/** Run one of StepSchema's steps on a page (also used by BROWSER_INTERACT). */
export async function runStep(page: Page, s: BrowserStep, baseUrl: string, input: Pick<NavInput, 'timeout_ms' | 'wait_until' | 'viewport'>): Promise<void> {
  const t = Math.min(5000, input.timeout_ms);
  switch (s.action) {
    case 'goto':
      await page.goto(appUrl(s.url, baseUrl), { waitUntil: input.wait_until, timeout: input.timeout_ms });
      return;
    case 'click':
      await page.locator(s.selector).first().click({ timeout: t });
      return;
    case 'fill':
      await page.locator(s.selector).first().fill(s.value, { timeout: t });
      return;
    case 'wait':
      await page.waitForTimeout(s.ms);
      return;
    case 'wait_for_selector':
      await page.waitForSelector(s.selector, { timeout: input.timeout_ms });
      return;
    case 'set_viewport':
      await page.setViewportSize({ width: s.width, height: s.height });
      return;
    case 'press_key':
    case 'press':
    case 'key':
      if (s.selector) await page.locator(s.selector).first().press(s.key, { timeout: t });
      else await page.keyboard.press(s.key);
      return;
    case 'eval_js':
    case 'evaluate':
      await page.evaluate(s.script);
      return;
    case 'mouse_move': {
      const vp = page.viewportSize() ?? input.viewport;
      await page.mouse.move(s.x ?? Math.round(vp.width / 2), s.y ?? Math.round(vp.height / 2), { steps: 5 });
      return;
    }
  }
}

export { sanitizedDom, waitForHydration } from './browser-dom';

export function artifactsDirOf(ctx: PrimitiveContext): string {
  mkdirSync(ctx.env.artifactsDir, { recursive: true });
  return ctx.env.artifactsDir;
}

export const safeName = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 80) || 'shot';
