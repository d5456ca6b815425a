import { statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Json } from '../model/json';
import { artifactsDirOf, NavigationFields, safeName, sanitizedDom, visit } from './browser-common';
import { definePrimitive } from './types';

export const MIN_SCREENSHOT_BYTES = 1024;

export const ScreenshotSchema = z
  .object({
    ...NavigationFields,
    name: z.string().min(1).default('shot'),
    full_page: z.boolean().default(true),
  })
  .strict();

/** Chain variables the browser steps set for P17 (never exported to other nodes). */
export const SCREENSHOT_VARS = ['screenshots', 'last_screenshot', 'rendered_dom', 'rendered_dom_url', 'last_page_title'];

/**
 * SCREENSHOT: open `url` (a path or a loopback URL, mapped onto the app) in Chromium, in the chain's
 * session or `login_as`'s role, run `steps`, settle, then save a JPEG in the node's artifacts
 * folder and keep the sanitized DOM. Evidence for P17: `screenshots` (paths, appended),
 * `last_screenshot`, `rendered_dom`, `rendered_dom_url`. Fails when the page cannot be reached,
 * answers ≥ 400, a step or wait_for_selector fails, or the file is not over 1 KiB — the screenshot
 * is still kept as evidence whenever the page was reached.
 */
export const SCREENSHOT = definePrimitive({
  id: 'SCREENSHOT',
  name: 'screenshot',
  schema: ScreenshotSchema,
  produces: () => ({ exported: [], local: SCREENSHOT_VARS }),
  async run(input, ctx) {
    const dir = artifactsDirOf(ctx);
    const file = join(dir, `${safeName(input.name)}-${Date.now()}.jpg`);
    const out = await visit(ctx, input, async (page) => {
      const dom = await sanitizedDom(page).catch(() => '');
      await page.screenshot({ path: file, type: 'jpeg', quality: 80, fullPage: input.full_page });
      return { dom };
    });
    const v = out.visit;
    if (out.fatal || !out.result) return { passed: false, message: `SCREENSHOT ${input.name}: ${out.fatal ?? 'no capture'}`, data: { url: v.url } };
    const size = (() => {
      try {
        return statSync(file).size;
      } catch {
        return 0;
      }
    })();
    const problems = [...v.problems];
    if (size <= MIN_SCREENSHOT_BYTES) problems.push(`screenshot is ${size} B (need > ${MIN_SCREENSHOT_BYTES} B)`);
    else {
      const prev = ctx.state.vars.screenshots;
      ctx.state.vars.screenshots = [...(Array.isArray(prev) ? (prev as Json[]) : []), file];
      ctx.state.vars.last_screenshot = file;
    }
    ctx.state.vars.rendered_dom = out.result.dom;
    ctx.state.vars.rendered_dom_url = v.url;
    ctx.state.vars.last_page_title = v.title;
    const path = new URL(v.url).pathname;
    return {
      passed: problems.length === 0,
      message: `${path} → ${v.status ?? '?'}; screenshot ${size} B${v.title ? `; title ${JSON.stringify(v.title.slice(0, 80))}` : ''}${problems.length ? `; ${problems.join('; ')}` : ''}`,
      data: { url: v.url, status: v.status, title: v.title, file, bytes: size, dom_chars: out.result.dom.length, problems },
    };
  },
});
