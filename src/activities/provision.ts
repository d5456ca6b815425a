import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { config, hostQueueOf } from '../config';
import { InvalidInputError } from '../errors';
import { rolloutLogger } from '../log';
import { writeJson } from '../runs/files';
import { harnessLock, imagesLock, taskLock, type RolloutLock } from '../evaluation/rollout-lock';
import { buildImages, dockerHostCpus, effectiveLimits, checkImageMap, imageMapFromEnv, preflightImages, stackIsolation, type ImageMap } from '../sandbox';
import { sandboxBackend } from '../sandbox/factory';
import { loadTaskCompose } from '../tasks/task-compose';
import { firewallPlan } from '../sandbox/firewall';
import { planOf } from '../tasks/plan';
import { appUrlOf } from '../primitives/env-from-stack';
import type { Provisioned } from '../model/rollout';
import { taskFor } from './task-cache';
import { writePrompt } from './prepare-workspace';
import { activityCancelled, withHeartbeat } from './heartbeat';
import { CancelledFailure } from '@temporalio/common';

export interface ProvisionInput {
  rolloutKey: string;
  workflowId: string;
  taskDir: string;
  taskId: string;
  /** image map of the run (flags / sweep file); the worker's SAASBENCH_IMAGE_MAP is applied under it */
  imageMap?: ImageMap;
  /** also write the agent's prompt; the PRD and knowledge base go into the workspace with the agent's launch (runAgent) */
  prepare?: boolean;
}

/** Load and check the task, build its images and start its stack on this host. Idempotent. */
export async function provision(i: ProvisionInput): Promise<Provisioned> {
  return withHeartbeat(() => provisionStack(i));
}

async function provisionStack(i: ProvisionInput): Promise<Provisioned> {
  const started = Date.now();
  const log = rolloutLogger(i.rolloutKey, { activity: 'provision' });
  const task = taskFor(i.taskDir);
  if (task.id !== i.taskId) throw InvalidInputError.one(task.manifestFile, 'id', `task id is "${task.id}" but the rollout was started for "${i.taskId}"`);
  const runDir = join(config.runsDir(), i.rolloutKey);
  mkdirSync(runDir, { recursive: true });
  const project = loadTaskCompose(task);
  const imageMap = { ...imageMapFromEnv(), ...checkImageMap(i.imageMap ?? {}, 'rollout input imageMap') };
  // seconds, before anything is built: an image this host cannot have fails the rollout here, once
  await preflightImages(project, task.id, { imageMap });
  const images = await buildImages(project, task.id, { imageMap, onProgress: (line) => log.debug({ line }, 'build') });
  const isolation = stackIsolation(task.environment.appService, task.limits);
  let stack;
  try {
    stack = await sandboxBackend().up({
      rolloutKey: i.rolloutKey,
      taskId: task.id,
      project,
      images,
      labels: { 'saasbench.workflow': i.workflowId, 'saasbench.cluster': config.clusterId() },
      onProgress: (line) => log.info(line),
      isolation,
    });
  } catch (err) {
    // A half-started stack is worth nothing to the retry and holds ports: remove it first.
    await sandboxBackend().down(i.rolloutKey).catch(() => undefined);
    throw err;
  }
  // Cancelled while the stack was starting (the workflow has moved on and will never tear it down).
  if (activityCancelled()) {
    await sandboxBackend().down(i.rolloutKey).catch(() => undefined);
    throw new CancelledFailure('rollout cancelled during provisioning; its stack was removed');
  }
  if (i.prepare) writePrompt(task, runDir);
  const hostId = config.hostId();
  const result: Provisioned = {
    host: hostId,
    hostQueue: hostQueueOf(hostId),
    runDir,
    plan: planOf(task),
    stack,
    appUrl: appUrlOf(task, stack),
    provisionMs: Date.now() - started,
  };
  const cpus = await dockerHostCpus();
  const fw = await firewallPlan();
  const isolationLock: RolloutLock['isolation'] = {
    agentService: task.environment.appService,
    agentLimits: effectiveLimits(isolation.agentLimits, cpus),
    serviceLimits: effectiveLimits(isolation.serviceLimits, cpus),
    firewall: fw.applied ? 'on' : `off: ${fw.reason ?? 'unknown'}`,
    egressAllow: task.network?.allow ?? [],
  };
  writeJson(join(runDir, 'lock.json'), { harness: harnessLock(), task: taskLock(task), images: await imagesLock(images), ...(Object.keys(imageMap).length ? { imageMap } : {}), isolation: isolationLock } satisfies RolloutLock);
  writeJson(join(runDir, 'rollout.json'), { workflowId: i.workflowId, rolloutKey: i.rolloutKey, task: { id: task.id, dir: task.dir, hash: task.hash }, host: hostId, stack, appUrl: result.appUrl, provisionedAt: new Date().toISOString() });
  log.info({ appUrl: result.appUrl, ms: result.provisionMs }, 'stack up');
  // the agent's launch exec starts now, last (runc's work would slow the Docker calls above), and
  // is ready by the time Temporal has handed the rollout on to runAgent (exec-warm.ts)
  sandboxBackend().prewarm?.(stack.services[task.environment.appService].container);
  return result;
}
