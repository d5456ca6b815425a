import type http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * Listen on host:port and resolve with the bound port. With `anyPortIfTaken`, a port that was
 * taken meanwhile (a restarted relay asking for its old port) falls back to any free one.
 */
export function listenOn(server: http.Server, host: string, port: number, what: string, opts: { anyPortIfTaken?: boolean } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (opts.anyPortIfTaken && port !== 0 && err.code === 'EADDRINUSE') return resolve(listenOn(server, host, 0, what));
      reject(new Error(`${what} cannot listen on ${host}:${port}: ${err.message}`));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

const ListenState = z.object({ bindHost: z.string(), port: z.number().int(), token: z.string().optional() });
export type ListenState = z.infer<typeof ListenState>;

/**
 * Where an earlier process of the same rollout listened (the relay's, the proxies' state file), so
 * a restarted activity listens there again with the same token. Missing, unreadable or not of
 * that shape: null, and the caller starts afresh (any port, a new token).
 */
export function readListenState(file: string): ListenState | null {
  try {
    const s = ListenState.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return s.success ? s.data : null;
  } catch {
    return null;
  }
}
