// Reading and removing what a rollout owns, purely by label: the source of truth is the Docker
// engine, not worker memory, so retries and reapers after a crash see the same thing.
import type Dockerode from 'dockerode';
import { StackHandle } from '../model/sandbox';
import { docker } from './client';
import { SandboxInfraError, dockerStatus, infra, isNotFound } from './errors';
import { LABEL, checkRolloutKey, networkName, projectName } from './naming';
import { reapOrphanFirewalls, removeStackFirewall } from './firewall';

export { StackHandle };

export interface StackState {
  handle: StackHandle;
  /** Every expected service has a container that is running (or a one-shot that exited 0). */
  complete: boolean;
  /** Anything at all exists for this rollout. */
  exists: boolean;
  inspections: Record<string, Dockerode.ContainerInspectInfo>;
}

const rolloutFilter = (key: string) => JSON.stringify({ label: [`${LABEL.rollout}=${key}`] });

export function loopbackPorts(info: Dockerode.ContainerInspectInfo): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, binds] of Object.entries(info.NetworkSettings?.Ports ?? {})) {
    const b = (binds ?? []).find((x) => x.HostIp === '127.0.0.1') ?? (binds ?? [])[0];
    if (b?.HostPort) out[key] = Number(b.HostPort);
  }
  return out;
}

export async function inspectStack(rolloutKey: string): Promise<StackState> {
  const key = checkRolloutKey(rolloutKey);
  const project = projectName(key);
  const network = networkName(project);
  try {
    const list = await docker().listContainers({ all: true, filters: rolloutFilter(key) });
    const nets = await docker().listNetworks({ filters: rolloutFilter(key) });
    const inspections: Record<string, Dockerode.ContainerInspectInfo> = {};
    let expected: string[] | undefined;
    for (const c of list) {
      const service = c.Labels[LABEL.service];
      if (!service) continue;
      try {
        inspections[service] = await docker().getContainer(c.Id).inspect();
      } catch (err) {
        if (!isNotFound(err)) throw err; // removed between list and inspect: treat as absent
        continue;
      }
      expected ??= c.Labels[LABEL.services]?.split(',').filter(Boolean);
    }
    const handle: StackHandle = { rolloutKey: key, project, network, services: {} };
    for (const [service, info] of Object.entries(inspections)) {
      handle.services[service] = { container: info.Name.replace(/^\//, ''), ports: loopbackPorts(info) };
    }
    const ok = (s: string) => {
      const st = inspections[s]?.State;
      if (!st) return false;
      if (st.Running && !st.Restarting) return true;
      return inspections[s].Config.Labels?.[LABEL.oneshot] === 'true' && st.Status === 'exited' && st.ExitCode === 0;
    };
    const complete = !!expected && expected.length > 0 && expected.every(ok) && nets.some((n) => n.Name === network);
    return { handle, complete, exists: list.length > 0 || nets.length > 0, inspections };
  } catch (err) {
    throw infra(`inspecting stack ${key}`, err);
  }
}

/** The handle of a complete stack; null when nothing or only part of it exists. */
export async function findStack(rolloutKey: string): Promise<StackHandle | null> {
  const s = await inspectStack(rolloutKey);
  return s.complete ? s.handle : null;
}

/** Removes every container, network and volume labelled with the rollout, and its firewall rules. Idempotent. */
export async function downStack(rolloutKey: string): Promise<{ removed: { containers: number; networks: number; volumes: number } }> {
  const key = checkRolloutKey(rolloutKey);
  const d = docker();
  const gone = (err: unknown) => isNotFound(err) || (dockerStatus(err) === 409 && /already in progress/i.test(String(err)));
  try {
    const containers = await d.listContainers({ all: true, filters: rolloutFilter(key) });
    const removedC = await Promise.all(
      containers.map((c) =>
        d
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .then(() => 1)
          .catch((err: unknown) => {
            if (gone(err)) return 0;
            throw err;
          }),
      ),
    );
    // once the containers are gone, the networks (then their firewall chains) and the volumes are
    // independent: removed side by side (bench/sweep-overhead.ts, teardown)
    const dropNetworks = async (): Promise<number> => {
      let networks = 0;
      for (const n of await d.listNetworks({ filters: rolloutFilter(key) })) {
        await d
          .getNetwork(n.Id)
          .remove()
          .then(() => networks++)
          .catch((err: unknown) => {
            if (!gone(err)) throw err;
          });
      }
      await removeStackFirewall(projectName(key));
      return networks;
    };
    const dropVolumes = async (): Promise<number> => {
      const vols = (await d.listVolumes({ filters: rolloutFilter(key) })).Volumes ?? [];
      const done = await Promise.all(vols.map((v) => d.getVolume(v.Name).remove().then(() => 1).catch((err: unknown) => {
        if (!gone(err)) throw err;
        return 0;
      })));
      return done.reduce((a: number, b) => a + b, 0);
    };
    const [networks, volumes] = await Promise.all([dropNetworks(), dropVolumes()]);
    return { removed: { containers: removedC.reduce((a, b) => a + b, 0), networks, volumes } };
  } catch (err) {
    throw infra(`removing stack ${key}`, err);
  }
}

/** Rollout keys that own any labelled container, network or volume on this engine. */
export async function listLabelledRollouts(): Promise<string[]> {
  const d = docker();
  const filters = JSON.stringify({ label: [LABEL.rollout] });
  try {
    const [cs, ns, vs] = await Promise.all([
      d.listContainers({ all: true, filters }),
      d.listNetworks({ filters }),
      d.listVolumes({ filters }),
    ]);
    const keys = new Set<string>();
    for (const l of [...cs.map((c) => c.Labels), ...ns.map((n) => n.Labels), ...(vs.Volumes ?? []).map((v) => v.Labels)]) {
      const k = l?.[LABEL.rollout];
      if (k) keys.add(k);
    }
    return [...keys].sort();
  } catch (err) {
    throw infra('listing labelled rollouts', err);
  }
}

/** The labels of every container a rollout owns on this engine (the worker reads workflow ids from them). */
export async function labelledContainers(): Promise<Record<string, string>[]> {
  try {
    return (await docker().listContainers({ all: true, filters: JSON.stringify({ label: [LABEL.rollout] }) })).map((c) => c.Labels ?? {});
  } catch (err) {
    throw infra('listing labelled containers', err);
  }
}

/** downStack for every labelled rollout that `isLive` disowns; keeps going past failures. */
export async function reapStacks(isLive: (rolloutKey: string) => Promise<boolean>): Promise<string[]> {
  const removed: string[] = [];
  const failures: string[] = [];
  for (const key of await listLabelledRollouts()) {
    try {
      if (await isLive(key)) continue;
      await downStack(key);
      removed.push(key);
    } catch (err) {
      failures.push(`${key}: ${(err as Error).message}`);
    }
  }
  // firewall chains whose bridge is gone (a crash between removing the network and the rules)
  await reapOrphanFirewalls().catch((err: Error) => failures.push(`firewall: ${err.message}`));
  if (failures.length) {
    throw new SandboxInfraError(`reaping failed for ${failures.length} rollout(s) (removed: ${removed.join(', ') || 'none'}):\n${failures.join('\n')}`);
  }
  return removed;
}
