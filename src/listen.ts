import type http from 'node:http';
import type { AddressInfo } from 'node:net';

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
