// upStack: create (or re-adopt) a rollout's network, volumes and containers in depends_on order.
// Names derive from the rollout key, so a retried activity converges on the same stack.
import type { ComposeProject } from './compose-schema';
import { docker } from './client';
import { ImageMissingError, SandboxInputError, dockerStatus, infra, isNotFound } from './errors';
import { containerCreateOptions } from './container-config';
import { LABEL, baseLabels, checkRolloutKey, containerName, networkName, projectName, volumeName } from './naming';
import { downStack, inspectStack, type StackHandle } from './stack-state';
import { waitForCondition, type Condition } from './stack-wait';
import { DEFAULT_ISOLATION, dockerHostCpus, effectiveLimits, networkOptions, type StackIsolation } from './isolation';
import { applyStackFirewall, firewallNames, FirewallError } from './firewall';

export interface UpStackOptions {
  rolloutKey: string;
  taskId: string;
  project: ComposeProject;
  /** service -> image ref, from buildImages. */
  images: Record<string, string>;
  labels?: Record<string, string>;
  /** Per wait (each depends_on condition and the final readiness wait). Default 120 s. */
  healthTimeoutMs?: number;
  /** Also wait for every service with a healthcheck before returning (like `up --wait`). Default true. */
  waitHealthy?: boolean;
  onProgress?: (line: string) => void;
  /** limits per service and which one is the agent's; default: DEFAULT_ISOLATION (docs/security.md) */
  isolation?: StackIsolation;
}

export async function upStack(opts: UpStackOptions): Promise<StackHandle> {
  const key = checkRolloutKey(opts.rolloutKey);
  const { project: spec, taskId } = opts;
  const log = opts.onProgress ?? (() => undefined);
  for (const s of spec.order) {
    if (!opts.images[s]) throw new SandboxInputError(`upStack: no image given for service "${s}" (run buildImages first)`);
  }
  const project = projectName(key);
  const network = networkName(project);
  const timeout = opts.healthTimeoutMs ?? 120_000;

  const existing = await inspectStack(key);
  if (existing.complete) {
    log(`stack ${project} already running; re-checking readiness`);
    await firewall(project);
    await waitReady(spec, project, timeout, opts.waitHealthy ?? true);
    return (await inspectStack(key)).handle;
  }
  if (existing.exists) {
    log(`stack ${project} is partial; removing it before recreating`);
    await downStack(key);
  }

  const labels = baseLabels(key, taskId, opts.labels);
  const oneshots = oneshotServices(spec);
  const d = docker();
  try {
    for (const v of Object.keys(spec.volumes)) {
      await d.createVolume({ Name: volumeName(project, v), Labels: { ...labels, [LABEL.project]: project } });
    }
    // Network names are not unique in Docker; only create one if no labelled one exists.
    const nets = await d.listNetworks({ filters: JSON.stringify({ name: [network], label: [`${LABEL.rollout}=${key}`] }) });
    if (!nets.some((n) => n.Name === network)) {
      await d.createNetwork({
        Name: network,
        Driver: 'bridge',
        CheckDuplicate: true,
        Options: networkOptions(firewallNames(project).bridge),
        Labels: { ...labels, [LABEL.project]: project },
      });
    }
  } catch (err) {
    throw infra(`creating network/volumes for ${project}`, err);
  }
  // before any container starts: nothing of the stack ever runs unguarded
  await firewall(project);
  const iso = opts.isolation ?? DEFAULT_ISOLATION;
  const cpus = await dockerHostCpus();

  for (const name of spec.order) {
    const svc = spec.services[name];
    for (const [dep, cond] of Object.entries(svc.dependsOn)) {
      log(`[${name}] waiting for ${dep}: ${cond}`);
      await waitForCondition(containerName(project, dep), dep, cond, Date.now() + timeout);
    }
    const create = containerCreateOptions(svc, {
      project,
      network,
      image: opts.images[name],
      labels: {
        ...labels,
        [LABEL.project]: project,
        [LABEL.services]: spec.order.join(','),
        ...(oneshots.has(name) ? { [LABEL.oneshot]: 'true' } : {}),
      },
      limits: effectiveLimits(name === iso.agentService ? iso.agentLimits : iso.serviceLimits, cpus),
      agent: name === iso.agentService,
    });
    log(`[${name}] creating ${create.name} from ${opts.images[name]}`);
    try {
      const c = await d.createContainer(create);
      await c.start();
    } catch (err) {
      if (isNotFound(err) && /image/i.test(String((err as Error).message))) {
        throw new ImageMissingError(name, opts.images[name], 'at container create');
      }
      if (dockerStatus(err) === 409) throw infra(`container ${create.name} already exists (concurrent upStack?)`, err);
      throw infra(`starting service "${name}" (${create.name})`, err);
    }
  }
  await waitReady(spec, project, timeout, opts.waitHealthy ?? true);
  const state = await inspectStack(key);
  if (!state.complete) throw infra(`stack ${project}`, new Error('not all services are running after start'));
  return state.handle;
}

async function firewall(project: string): Promise<void> {
  try {
    await applyStackFirewall(project);
  } catch (err) {
    // SAASBENCH_FIREWALL=required without a usable iptables is a configuration error, not a hiccup
    if (err instanceof FirewallError && /required/.test(err.message)) throw new SandboxInputError(err.message);
    throw infra(`firewall of ${project}`, err);
  }
}

/** Every service started (one-shots completed), and — if asked — healthchecked ones healthy. */
async function waitReady(spec: ComposeProject, project: string, timeoutMs: number, healthy: boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const oneshot = oneshotServices(spec);
  for (const name of spec.order) {
    const container = containerName(project, name);
    let cond: Condition = 'service_started';
    if (oneshot.has(name)) cond = 'service_completed_successfully';
    else if (healthy) {
      const info = await docker().getContainer(container).inspect().catch((err: unknown) => {
        throw infra(`inspecting ${container}`, err);
      });
      if (info.State.Health) cond = 'service_healthy';
    }
    await waitForCondition(container, name, cond, deadline);
  }
}

/** Services that another service awaits with service_completed_successfully: they are meant to exit. */
function oneshotServices(spec: ComposeProject): Set<string> {
  return new Set(
    Object.values(spec.services).flatMap((s) =>
      Object.entries(s.dependsOn)
        .filter(([, c]) => c === 'service_completed_successfully')
        .map(([dep]) => dep),
    ),
  );
}
