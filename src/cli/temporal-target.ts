import { ensureDevServer, type DevServerHandle } from '../temporal/dev-server';

/** TEMPORAL_ADDRESS if set, else the embedded dev server (started when not already running). */
export async function temporalTarget(quiet = false): Promise<DevServerHandle> {
  const h = await ensureDevServer();
  if (!quiet && h.started) process.stderr.write(`started the Temporal dev server at ${h.address} (UI ${h.uiUrl}), log ${h.logFile}\n`);
  return h;
}
