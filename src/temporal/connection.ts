/**
 * A Temporal client for a given address. This never starts a server: get the address from
 * `ensureDevServer()` (src/temporal/dev-server.ts) first.
 *
 *   const server = await ensureDevServer();
 *   const { client, connection } = await connectClient(server);
 *   try { ... } finally { await connection.close(); }
 */
import { Client, Connection } from '@temporalio/client';
import { ensureSearchAttributes } from './dev-server';

export interface ConnectTarget {
  /** host:port of the Temporal frontend. */
  address: string;
  /** Default 'default'. */
  namespace?: string;
}

export interface ConnectOptions {
  /** Connect timeout (default 10 s). */
  connectTimeoutMs?: number;
  /**
   * Register the saasbench search attributes if missing (for clusters given by TEMPORAL_ADDRESS;
   * the dev server registers them at start). Default false.
   */
  ensureSearchAttributes?: boolean;
  /** Environment for TLS/API key settings (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface ConnectedClient {
  client: Client;
  connection: Connection;
  namespace: string;
}

/**
 * Connects to `target`. For remote clusters, TEMPORAL_API_KEY (implies TLS) and TEMPORAL_TLS=1
 * are honoured; the local dev server needs neither.
 */
export async function connectClient(target: ConnectTarget | string, opts: ConnectOptions = {}): Promise<ConnectedClient> {
  const env = opts.env ?? process.env;
  const { address, namespace = 'default' } = typeof target === 'string' ? { address: target } : target;
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const tls = apiKey !== undefined || env.TEMPORAL_TLS === '1' || env.TEMPORAL_TLS === 'true';
  const connection = await Connection.connect({
    address,
    connectTimeout: opts.connectTimeoutMs ?? 10_000,
    ...(tls && { tls: true }),
    ...(apiKey !== undefined && { apiKey }),
  });
  try {
    if (opts.ensureSearchAttributes) await ensureSearchAttributes(connection, namespace);
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  return { client: new Client({ connection, namespace }), connection, namespace };
}
