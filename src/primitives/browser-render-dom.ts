import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { artifactsDirOf, NavigationFields, safeName, sanitizedDom, visit, waitForHydration } from './browser-common';
import { definePrimitive } from './types';

export const RenderDomSchema = z
  .object({
    ...NavigationFields,
    name: z.string().min(1).default('dom'),
    /** the sanitized DOM is cut to this many characters */
    max_chars: z.number().int().min(1000).max(2_000_000).default(200_000),
    /** the sanitized DOM must be longer than this (an empty shell page fails) */
    min_chars: z.number().int().min(0).default(200),
    /** texts the rendered page must contain (case-sensitive) */
    expect_text: z.array(z.string().min(1)).optional(),
  })
  .strict();

/**
 * RENDER_DOM: open the page like SCREENSHOT, wait for hydration (the HTML stops growing), and keep
 * the sanitized DOM (no scripts, styles, svg, comments, inline handlers or data: URIs; whitespace
 * collapsed) in `rendered_dom` for P17 and a file in the node's artifacts. Passes when the page
 * was reached with a status < 400, every step worked, the DOM is longer than `min_chars`, and it
 * contains every `expect_text` (matched against the page's visible text).
 */
export const RENDER_DOM = definePrimitive({
  id: 'RENDER_DOM',
  name: 'render_dom',
  schema: RenderDomSchema,
  produces: () => ({ exported: [], local: ['rendered_dom', 'rendered_dom_url', 'rendered_dom_length'] }),
  async run(input, ctx) {
    const out = await visit(ctx, input, async (page) => {
      await waitForHydration(page, Math.min(12_000, input.timeout_ms));
      const dom = await sanitizedDom(page);
      const text = ((await page.evaluate('document.body ? document.body.innerText : ""').catch(() => '')) as string) ?? '';
      return { dom, text };
    });
    const v = out.visit;
    if (out.fatal || !out.result) return { passed: false, message: `RENDER_DOM: ${out.fatal ?? 'no capture'}`, data: { url: v.url } };
    const full = out.result.dom;
    const dom = full.slice(0, input.max_chars);
    const file = join(artifactsDirOf(ctx), `${safeName(input.name)}-${Date.now()}.html`);
    writeFileSync(file, dom);
    ctx.state.vars.rendered_dom = dom;
    ctx.state.vars.rendered_dom_url = v.url;
    ctx.state.vars.rendered_dom_length = full.length;
    const problems = [...v.problems];
    if (full.length <= input.min_chars) problems.push(`rendered DOM has ${full.length} characters (need > ${input.min_chars})`);
    const missing = (input.expect_text ?? []).filter((t) => !out.result!.text.includes(t) && !full.includes(t));
    if (missing.length) problems.push(`page lacks ${missing.map((t) => JSON.stringify(t)).join(', ')}`);
    return {
      passed: problems.length === 0,
      message: `${new URL(v.url).pathname} → ${v.status ?? '?'}; DOM ${full.length} chars${full.length > input.max_chars ? ` (kept ${input.max_chars})` : ''}${problems.length ? `; ${problems.join('; ')}` : ''}`,
      data: { url: v.url, status: v.status, title: v.title, dom_chars: full.length, file, problems },
    };
  },
});
