import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { appUrl, artifactsDirOf, NavigationFields, safeName, sanitizedDom, visit, waitForHydration } from './browser-common';
import { definePrimitive } from './types';

export const RenderDomSchema = z
  .object({
    ...NavigationFields,
    url: z.string().min(1).optional(),
    /** several pages rendered in one browser context, one after the other; their DOMs are joined under `--- PAGE: <url> ---` headers */
    urls: z.array(z.string().min(1)).min(1).max(10).optional(),
    /** drop every class attribute from the kept DOM (utility-class noise for the judge) */
    strip_classes: z.boolean().default(false),
    name: z.string().min(1).default('dom'),
    /** the sanitized DOM is cut to this many characters */
    max_chars: z.number().int().min(1000).max(2_000_000).default(200_000),
    /** the sanitized DOM must be longer than this (an empty shell page fails) */
    min_chars: z.number().int().min(0).default(200),
    /** texts the rendered page must contain (case-sensitive) */
    expect_text: z.array(z.string().min(1)).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.url === undefined) === (v.urls === undefined)) ctx.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of url and urls' });
  });

const stripClasses = (html: string) => html.replace(/\sclass=("[^"]*"|'[^']*')/g, '').replace(/[ \t]+/g, ' ');

/**
 * RENDER_DOM: open the page like SCREENSHOT, wait for hydration (the HTML stops growing), and keep
 * the sanitized DOM (no scripts, styles, svg, comments, inline handlers or data: URIs; whitespace
 * collapsed) in `rendered_dom` for P17 and a file in the node's artifacts. Passes when the page
 * was reached with a status < 400, every step worked, the DOM is longer than `min_chars`, and it
 * contains every `expect_text` (matched against the page's visible text). `urls` renders several
 * pages in one context (each must answer < 400); `strip_classes` drops class attributes.
 */
export const RENDER_DOM = definePrimitive({
  id: 'RENDER_DOM',
  name: 'render_dom',
  schema: RenderDomSchema,
  produces: () => ({ exported: [], local: ['rendered_dom', 'rendered_dom_url', 'rendered_dom_length'] }),
  async run(input, ctx) {
    const pages = input.urls ?? [input.url as string];
    const out = await visit(ctx, { ...input, url: pages[0] }, async (page) => {
      const read = async () => {
        await waitForHydration(page, Math.min(12_000, input.timeout_ms));
        const dom = await sanitizedDom(page);
        const text = ((await page.evaluate('document.body ? document.body.innerText : ""').catch(() => '')) as string) ?? '';
        return { dom: input.strip_classes ? stripClasses(dom) : dom, text };
      };
      if (pages.length === 1) return read();
      const parts: { url: string; dom: string; text: string; problem?: string }[] = [];
      for (const [i, u] of pages.entries()) {
        const url = appUrl(u, ctx.env.baseUrl);
        try {
          if (i > 0) {
            const res = await page.goto(url, { waitUntil: input.wait_until, timeout: input.timeout_ms });
            if ((res?.status() ?? 0) >= 400) parts.push({ url, dom: '', text: '', problem: `GET ${new URL(url).pathname} answered ${res?.status()}` });
          }
          if (input.settle_ms && i > 0) await page.waitForTimeout(input.settle_ms);
          parts.push({ url, ...(await read()) });
        } catch (e) {
          parts.push({ url, dom: '(page did not render)', text: '', problem: `${url}: ${(e as Error).message.split('\n')[0]}` });
        }
      }
      const kept = parts.filter((p) => p.dom || !p.problem);
      return {
        dom: kept.map((p) => `--- PAGE: ${p.url} ---\n${p.dom}`).join('\n\n'),
        text: kept.map((p) => p.text).join('\n'),
        problems: parts.flatMap((p) => (p.problem ? [p.problem] : [])),
        label: `${pages.length} pages: ${kept.map((p) => p.url).join(', ')}`,
      };
    });
    const v = out.visit;
    if (out.fatal || !out.result) return { passed: false, message: `RENDER_DOM: ${out.fatal ?? 'no capture'}`, data: { url: v.url } };
    const full = out.result.dom;
    const dom = full.slice(0, input.max_chars);
    const file = join(artifactsDirOf(ctx), `${safeName(input.name)}-${Date.now()}.html`);
    writeFileSync(file, dom);
    ctx.state.vars.rendered_dom = dom;
    const result = out.result as { dom: string; text: string; problems?: string[]; label?: string };
    ctx.state.vars.rendered_dom_url = result.label ?? v.url;
    ctx.state.vars.rendered_dom_length = full.length;
    const problems = [...v.problems, ...(result.problems ?? [])];
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
