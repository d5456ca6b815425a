// The worker thread behind render-thread.ts: renders report pages on request.
import { parentPort } from 'node:worker_threads';
import { renderRolloutHtml } from './rollout-html';
import { renderSweepHtml } from './sweep-html';
import type { RenderRequest } from './render-thread';

parentPort?.on('message', (m: RenderRequest) => {
  const html = m.kind === 'rollout' ? renderRolloutHtml(m.runDir, m.th) : renderSweepHtml(m.result, m.links);
  html.then(
    (h) => parentPort?.postMessage({ id: m.id, html: h }),
    (err: unknown) => parentPort?.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
