/**
 * The relay's per-request log (<runDir>/agent/gateway-log.jsonl, shape in src/model/gateway-log.ts):
 * one appended line per model request, so the rollout page can show where the agent's time went
 * (LLM time vs tool time), the statuses it got, retries and governor waits. Append-only and
 * synchronous: a line is small, and a crash loses at most the requests still open.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type http from 'node:http';
import { GATEWAY_LOG_FILE, type GatewayLogEntry } from '../model/gateway-log';

type Extra = Pick<GatewayLogEntry, 'retries' | 'waitMs' | 'costUsd'>;
const extras = new WeakMap<http.ServerResponse, Extra>();

/**
 * Attach retries / governor wait / cost to the request answered by `res` (summed when called more
 * than once). The relay's retry and governor code calls this; the line is written when `res` closes.
 */
export function noteGatewayRequest(res: http.ServerResponse, x: Extra): void {
  const cur = extras.get(res) ?? {};
  const add = (a: number | undefined, b: number | undefined) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
  const next: Extra = {};
  for (const k of ['retries', 'waitMs', 'costUsd'] as const) {
    const v = add(cur[k], x[k]);
    if (v !== undefined) next[k] = v;
  }
  extras.set(res, next);
}

interface Usage {
  input: number;
  output: number;
}

/**
 * Log the request `res` answers, into `dir`/gateway-log.jsonl, when its response closes. Tokens are
 * the growth of the relay's running `usage` while the request was open: exact for one request at a
 * time (how agents talk), shared out approximately when requests overlap.
 */
export function logGatewayRequest(dir: string, protocol: string, res: http.ServerResponse, usage: Usage): void {
  const started = Date.now();
  const in0 = usage.input;
  const out0 = usage.output;
  res.on('close', () => {
    const entry: GatewayLogEntry = {
      t: new Date(started).toISOString(),
      ms: Date.now() - started,
      status: res.headersSent ? res.statusCode : 0,
      protocol,
      inTok: Math.max(0, usage.input - in0),
      outTok: Math.max(0, usage.output - out0),
      ...extras.get(res),
    };
    try {
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, GATEWAY_LOG_FILE), `${JSON.stringify(entry)}\n`);
    } catch {
      // a log line is not worth failing the agent's request over
    }
  });
}
