/** Is a Temporal frontend answering? A TCP connect plus a real gRPC call (never global fetch). */
import * as net from 'node:net';
import { Connection } from '@temporalio/client';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves true when a TCP connection to host:port succeeds within timeoutMs. */
export function tcpProbe(host: string, p: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: p });
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** Runs `fn` but gives up after ms (a ref'd timer keeps the process alive while waiting). */
async function withTimeout<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export interface ProbeResult {
  ok: boolean;
  /** A TCP listener answered on the port. */
  listening: boolean;
  reason?: string;
}

/**
 * Is a Temporal frontend answering on `address`? TCP connect, then Connection.connect +
 * getSystemInfo (+ describeNamespace when `namespace` is given), all bounded by timeoutMs.
 */
export async function probeTemporal(address: string, namespace?: string, timeoutMs = 3000): Promise<ProbeResult> {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (!m) return { ok: false, listening: false, reason: `bad address ${address}` };
  const listening = await tcpProbe(m[1]!, Number(m[2]), Math.min(timeoutMs, 1000));
  if (!listening) return { ok: false, listening: false, reason: 'connection refused' };
  let connection: Connection | undefined;
  try {
    await withTimeout(timeoutMs, `Temporal probe of ${address}`, async () => {
      connection = await Connection.connect({ address, connectTimeout: timeoutMs });
      const deadline = Date.now() + timeoutMs;
      await connection.withDeadline(deadline, () => connection!.workflowService.getSystemInfo({}));
      if (namespace) {
        await connection.withDeadline(deadline, () => connection!.workflowService.describeNamespace({ namespace }));
      }
    });
    return { ok: true, listening: true };
  } catch (err) {
    return { ok: false, listening: true, reason: (err as Error).message };
  } finally {
    if (connection) await connection.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Process helpers

