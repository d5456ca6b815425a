// Translates a normalized ServiceSpec into Docker's container-create body for one rollout.
// Host ports are never taken from the compose file: each published port binds a random free
// port on 127.0.0.1 so parallel rollouts never clash and nothing is exposed off-host.
import type Dockerode from 'dockerode';
import type { ServiceSpec } from './compose-schema';
import { LABEL, containerName, volumeName } from './naming';
import { hostConfigFor, type ResourceLimits } from './isolation';

export interface ContainerPlan {
  project: string;
  network: string;
  image: string;
  labels: Record<string, string>;
  /** CPU, memory and pids limits (src/sandbox/isolation.ts); none when absent */
  limits?: ResourceLimits;
  /** the agent works in this container: also no-new-privileges */
  agent?: boolean;
}

export const portKey = (p: { target: number; protocol: string }): string => `${p.target}/${p.protocol}`;

export function containerCreateOptions(spec: ServiceSpec, plan: ContainerPlan): Dockerode.ContainerCreateOptions {
  const exposed: Record<string, Record<string, never>> = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  for (const p of spec.ports) {
    exposed[portKey(p)] = {};
    bindings[portKey(p)] = [{ HostIp: '127.0.0.1', HostPort: '' }];
  }
  const binds: string[] = [];
  const anonymous: Record<string, Record<string, never>> = {};
  for (const m of spec.mounts) {
    if (m.type === 'anonymous') anonymous[m.target] = {};
    else {
      // Legacy Binds (not Mounts) so a missing bind source is created, as compose short syntax does.
      const source = m.type === 'volume' ? volumeName(plan.project, m.source) : m.source;
      binds.push(`${source}:${m.target}${m.readOnly ? ':ro' : ''}`);
    }
  }
  const hc = spec.healthcheck;
  return {
    name: containerName(plan.project, spec.name),
    Image: plan.image,
    Cmd: spec.command,
    Entrypoint: spec.entrypoint,
    Env: Object.entries(spec.environment).map(([k, v]) => `${k}=${v}`),
    WorkingDir: spec.workingDir,
    User: spec.user,
    Hostname: spec.hostname,
    Tty: spec.tty,
    OpenStdin: spec.stdinOpen,
    ExposedPorts: exposed,
    Volumes: anonymous,
    // Harness labels last so a compose file cannot spoof ownership.
    Labels: { ...spec.labels, ...plan.labels, [LABEL.service]: spec.name },
    Healthcheck:
      hc === null
        ? { Test: ['NONE'] }
        : hc
          ? {
              Test: hc.test,
              Interval: hc.intervalNs,
              Timeout: hc.timeoutNs,
              StartPeriod: hc.startPeriodNs,
              Retries: hc.retries,
            }
          : undefined,
    HostConfig: {
      ...(plan.limits ? hostConfigFor(plan.limits, !!plan.agent) : {}),
      Binds: binds,
      PortBindings: bindings,
      NetworkMode: plan.network,
      Dns: spec.dns.length ? spec.dns : undefined,
      ExtraHosts: spec.extraHosts.length ? spec.extraHosts : undefined,
      Tmpfs: Object.keys(spec.tmpfs).length ? spec.tmpfs : undefined,
      ShmSize: spec.shmSize,
      Ulimits: spec.ulimits.length ? spec.ulimits.map((u) => ({ Name: u.name, Soft: u.soft, Hard: u.hard })) : undefined,
      Init: spec.init,
      // The harness owns lifecycle; a restarting container would hide failures from health waits.
      RestartPolicy: { Name: 'no' },
    },
    NetworkingConfig: { EndpointsConfig: { [plan.network]: { Aliases: [spec.name, ...(spec.aliases ?? [])] } } },
  };
}
