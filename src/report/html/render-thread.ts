import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { TaxonomyThresholds } from '../../scoring/taxonomy';
import type { SweepResult } from '../../model/sweep';
import { renderRolloutHtml } from './rollout-html';
import { renderSweepHtml } from './sweep-html';

/**
 * Report pages rendered on a worker thread. A rollout page's vega charts are ~50–150 ms of
 * synchronous CPU; in a worker process that time blocks the event loop that also drives the
 * rollout's teardown (persistResults runs beside it), so every Docker answer waited for the
 * charts: teardown took ~0.14 s longer than the same removal alone (bench/sweep-overhead.ts).
 *
 * One thread per process, started on first use and kept (vega loads once); it never keeps the
 * process alive. The thread only renders and returns the HTML: the caller writes it, through
 * writeAtomic's redaction of the secrets registered in this thread. Without the compiled entry
 * (sources run directly) the page is rendered here; a thread that dies fails the renders it had,
 * and the next render starts another.
 */
type Job = { kind: 'rollout'; runDir: string; th?: TaxonomyThresholds } | { kind: 'sweep'; result: SweepResult; links: Record<string, string> };
export type RenderRequest = Job & { id: number };

interface Reply {
  id: number;
  html?: string;
  error?: string;
}

const ENTRY = join(__dirname, 'render-thread-main.js');
let worker: Worker | null = null;
let nextId = 1;
const waiting = new Map<number, { resolve(html: string): void; reject(err: Error): void }>();

function thread(): Worker | null {
  if (worker) return worker;
  if (!existsSync(ENTRY)) return null;
  const w = new Worker(ENTRY);
  w.unref();
  w.on('message', (r: Reply) => {
    const p = waiting.get(r.id);
    if (!p) return;
    waiting.delete(r.id);
    if (r.error !== undefined) p.reject(new Error(r.error));
    else p.resolve(r.html ?? '');
  });
  const fail = (err: Error) => {
    if (worker === w) worker = null;
    for (const [id, p] of waiting) {
      waiting.delete(id);
      p.reject(err);
    }
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`report render thread exited (code ${code})`)));
  worker = w;
  return w;
}

/** renderRolloutHtml(runDir, th) off this thread's event loop; in this thread when no thread can be had. */
export function renderRolloutHtmlOffThread(runDir: string, th?: TaxonomyThresholds): Promise<string> {
  return render({ kind: 'rollout', runDir, th }, () => renderRolloutHtml(runDir, th));
}

/** renderSweepHtml off this thread (the same thread: vega is loaded there already). */
export function renderSweepHtmlOffThread(result: SweepResult, links: Record<string, string>): Promise<string> {
  return render({ kind: 'sweep', result, links }, () => renderSweepHtml(result, links));
}

async function render(job: Job, here: () => Promise<string>): Promise<string> {
  const w = thread();
  if (!w) return here();
  const id = nextId++;
  const html = new Promise<string>((resolve, reject) => waiting.set(id, { resolve, reject }));
  // a pending render keeps the process up until it answers; an idle thread does not
  w.ref();
  try {
    w.postMessage({ ...job, id });
    return await html;
  } finally {
    if (waiting.size === 0 && worker === w) w.unref();
  }
}
