import type { Page } from 'playwright-core';

/**
 * The page's HTML without what a reader (or judge) does not need: script, style, noscript, svg,
 * template, link and iframe elements, comments, inline style and on* attributes, data: URIs;
 * whitespace collapsed.
 */
const SANITIZE_JS = `(() => {
  const root = document.documentElement.cloneNode(true);
  root.querySelectorAll('script,style,noscript,svg,template,link,iframe').forEach((e) => e.remove());
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_COMMENT);
  const comments = [];
  while (walker.nextNode()) comments.push(walker.currentNode);
  comments.forEach((c) => c.parentNode && c.parentNode.removeChild(c));
  root.querySelectorAll('*').forEach((el) => {
    for (const a of Array.from(el.attributes)) {
      const n = a.name.toLowerCase();
      if (n === 'style' || n.startsWith('on') || /^\\s*data:/i.test(a.value)) el.removeAttribute(a.name);
    }
  });
  return root.outerHTML;
})()`;

export async function sanitizedDom(page: Page): Promise<string> {
  const html = (await page.evaluate(SANITIZE_JS)) as string;
  return html.replace(/\s+/g, ' ').replace(/>\s+</g, '><').trim();
}

/** Wait until the page's HTML stops growing: two consecutive 500 ms polls within ±1 %, at most `maxMs`. */
export async function waitForHydration(page: Page, maxMs: number): Promise<void> {
  let prev = -1;
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const len = (await page.evaluate('document.documentElement.outerHTML.length').catch(() => -1)) as number;
    if (prev > 0 && Math.abs(len - prev) <= prev * 0.01) return;
    prev = len;
    await page.waitForTimeout(500);
  }
}
