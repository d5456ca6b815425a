import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode, type LogLevel, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import * as activities from '../activities';
import { config, hostQueueOf } from '../config';
import { log } from '../log';
import { Client, Connection } from '@temporalio/client';
import { startReaper } from './reaper';
import { closeSharedBrowser } from '../primitives/browser-common';
import { configureGovernor } from '../governor/client';
import { snapshotKeep, snapshotStore } from '../snapshots/factory';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
let runtimeInstalled = false;

/** Route the SDK's own logs through pino, at warn unless asked otherwise (they are chatty at info). */
function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (process.env.SAASBENCH_TEMPORAL_LOG_LEVEL ?? 'WARN') as LogLevel;
  // A test environment may have created the runtime already; its logger then stays.
  if ((Runtime as unknown as { _instance?: unknown })._instance) return;
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      const fields = { sdk: true, ...(entry.meta ?? {}) };
      // The host-queue worker deliberately has no workflows; the SDK warns about that.
      if (entry.message.startsWith('No workflows registered')) return log.debug(fields, entry.message);
      if (entry.level === 'ERROR') log.error(fields, entry.message);
      else if (entry.level === 'WARN') log.warn(fields, entry.message);
      else log.debug(fields, entry.message);
    }),
  });
}

/** Bundle the workflow code once per process (webpack takes ~1 s). */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: quietLogger() });
  return bundle;
}

export interface WorkerHandle {
  hostId: string;
  hostQueue: string;
  sharedQueue: string;
  /** resolves when both workers have stopped */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * One worker host = two Temporal workers on one connection: the shared queue (workflows and
 * `provision`) and this host's own queue (every activity that touches the rollout's containers).
 */
export async function startWorker(opts: { address: string; namespace: string; hostId?: string; sharedQueue?: string; maxConcurrentActivities?: number; reapEverySeconds?: number }): Promise<WorkerHandle> {
  const hostId = opts.hostId ?? config.hostId();
  const sharedQueue = opts.sharedQueue ?? config.sharedQueue();
  const hostQueue = hostQueueOf(hostId);
  if (opts.hostId) process.env.SAASBENCH_HOST_ID = hostId;
  process.env.SAASBENCH_CLUSTER_ID = `${opts.address}/${opts.namespace}`;
  installRuntime();
  // settings of this host that would otherwise fail only inside a rollout: a bad value stops the worker here, in one line
  snapshotStore();
  snapshotKeep();
  // the rate governor's workflows run on the shared queue; its client connects on first use only
  configureGovernor({ address: opts.address, namespace: opts.namespace, taskQueue: sharedQueue });
  const connection = await NativeConnection.connect({ address: opts.address });
  const shared = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: sharedQueue,
    workflowBundle: await workflowBundle(),
    activities: { provision: activities.provision, validateRolloutInput: activities.validateRolloutInput, sweepResolveTasks: activities.sweepResolveTasks, sweepLookupRollouts: activities.sweepLookupRollouts, sweepWriteReport: activities.sweepWriteReport, latestSnapshot: activities.latestSnapshot },
    maxConcurrentActivityTaskExecutions: 4,
  });
  const host = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: hostQueue,
    activities,
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 32,
  });
  // The reaper cleans up after workflows that were terminated (they never run their teardown).
  const reapEvery = opts.reapEverySeconds ?? Number(process.env.SAASBENCH_REAP_INTERVAL_SECONDS ?? 600);
  const clientConn = reapEvery > 0 ? await Connection.connect({ address: opts.address }) : undefined;
  const stopReaper = clientConn ? startReaper(new Client({ connection: clientConn, namespace: opts.namespace }), reapEvery * 1000, `${opts.address}/${opts.namespace}`) : () => undefined;
  const done = Promise.all([shared.run(), host.run()]).then(async () => {
    stopReaper();
    await closeSharedBrowser().catch(() => undefined);
    await clientConn?.close();
    await connection.close();
  });
  log.info({ hostId, sharedQueue, hostQueue }, 'worker polling');
  return {
    hostId,
    hostQueue,
    sharedQueue,
    done,
    async shutdown() {
      for (const w of [shared, host]) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

function quietLogger() {
  const noop = () => undefined;
  return { trace: noop, debug: noop, info: noop, warn: (m: string) => log.warn(m), error: (m: string) => log.error(m), log: noop };
}
