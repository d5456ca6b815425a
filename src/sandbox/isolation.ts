// Isolation of a rollout's containers (docs/security.md): resource limits, hardening of the agent's
// container, what a compose file may mount, and how the rollout's bridge network is created.
import * as path from 'node:path';
import type Dockerode from 'dockerode';
import { docker } from './client';
import type { ComposeProject } from './compose-schema';

export interface ResourceLimits {
  /** CPUs (fractional allowed); clamped to what the Docker host has */
  cpus: number;
  memoryBytes: number;
  pids: number;
}

const GiB = 1024 ** 3;

/** The agent's container, unless the task says otherwise (task.yaml `limits`). */
export const DEFAULT_AGENT_LIMITS: ResourceLimits = { cpus: 2, memoryBytes: 4 * GiB, pids: 1024 };
/** Every other service of the stack (databases, caches). */
export const DEFAULT_SERVICE_LIMITS: ResourceLimits = { cpus: 2, memoryBytes: 2 * GiB, pids: 1024 };

export interface StackIsolation {
  /** the service the agent works in (gets `agentLimits` and the hardening) */
  agentService?: string;
  agentLimits: ResourceLimits;
  serviceLimits: ResourceLimits;
}

export const DEFAULT_ISOLATION: StackIsolation = { agentLimits: DEFAULT_AGENT_LIMITS, serviceLimits: DEFAULT_SERVICE_LIMITS };

let ncpu: Promise<number> | undefined;

/** CPUs of the Docker host (Docker refuses NanoCpus above it). */
export function dockerHostCpus(): Promise<number> {
  ncpu ??= docker()
    .info()
    .then((i: { NCPU?: number }) => i.NCPU ?? 1)
    .catch(() => {
      ncpu = undefined;
      return 1;
    });
  return ncpu;
}

/** The limits as Docker applies them (CPUs clamped to the host). */
export function effectiveLimits(l: ResourceLimits, hostCpus: number): ResourceLimits {
  return { cpus: Math.min(l.cpus, hostCpus), memoryBytes: l.memoryBytes, pids: l.pids };
}

/** HostConfig fields for one service. Swap is not granted beyond the memory limit. */
export function hostConfigFor(l: ResourceLimits, agent: boolean): Partial<Dockerode.HostConfig> {
  return {
    NanoCpus: Math.round(l.cpus * 1e9),
    Memory: l.memoryBytes,
    MemorySwap: l.memoryBytes,
    PidsLimit: l.pids,
    // raw sockets would allow ARP/packet spoofing on the bridge; nobody needs them
    CapDrop: ['NET_RAW'],
    // setuid binaries cannot raise privileges in the agent's container
    ...(agent ? { SecurityOpt: ['no-new-privileges:true'] } : {}),
  };
}

/**
 * Bridge options of a rollout network: a deterministic interface name (the firewall's rules name
 * it) and no masquerading (no NAT: packets from the bridge never leave the host as the host).
 */
export function networkOptions(bridge: string): Record<string, string> {
  return {
    'com.docker.network.bridge.name': bridge,
    'com.docker.network.bridge.enable_ip_masquerade': 'false',
  };
}

export interface PolicyIssue {
  /** JSON path inside the compose file */
  path: string;
  message: string;
}

/** Host paths that hand a container the host: engine sockets and state, kernel interfaces, the root. */
const HOST_CONTROL = [/\.sock$/, /^\/(var\/)?run(\/|$)/, /^\/var\/lib\/(docker|containerd)(\/|$)/, /^\/(proc|sys|dev|boot|etc|root)(\/|$)/, /^\/$/];

/**
 * What a task's compose file may mount, beyond the compose subset itself:
 *  - the agent's service: named volumes only (no host path at all);
 *  - any service: bind sources inside the task folder, never a container-engine socket,
 *    /proc, /sys, /dev, and never a path holding the hidden evaluation or the reference solution.
 */
export function isolationPolicyIssues(project: ComposeProject, o: { agentService?: string; hidden?: string[]; root?: string }): PolicyIssue[] {
  const root = path.resolve(o.root ?? project.dir);
  const issues: PolicyIssue[] = [];
  const hidden = (o.hidden ?? []).map((h) => path.resolve(h));
  const inside = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
  for (const [name, svc] of Object.entries(project.services)) {
    svc.mounts.forEach((m, i) => {
      if (m.type !== 'bind') return;
      const at = `services.${name}.volumes[${i}]`;
      const src = path.resolve(m.source);
      if (HOST_CONTROL.some((re) => re.test(src))) {
        issues.push({ path: at, message: `mounting ${src} into a container is not allowed (it would hand the container the host)` });
      } else if (name === o.agentService) {
        issues.push({ path: at, message: `the agent's service "${name}" may not mount a host path (${src}); use a named volume (the workspace is one)` });
      } else if (!inside(src, root)) {
        issues.push({ path: at, message: `bind source ${src} is outside the task folder ${root}` });
      } else if (hidden.some((h) => inside(h, src) || inside(src, h))) {
        issues.push({ path: at, message: `bind source ${src} holds (or is inside) the hidden evaluation or the reference solution` });
      }
    });
  }
  return issues;
}

/** A stack's isolation from a task's `limits` (unset fields take the defaults). */
export function stackIsolation(agentService: string, limits?: { cpus?: number; memoryBytes?: number; pids?: number }): StackIsolation {
  return {
    agentService,
    agentLimits: {
      cpus: limits?.cpus ?? DEFAULT_AGENT_LIMITS.cpus,
      memoryBytes: limits?.memoryBytes ?? DEFAULT_AGENT_LIMITS.memoryBytes,
      pids: limits?.pids ?? DEFAULT_AGENT_LIMITS.pids,
    },
    serviceLimits: DEFAULT_SERVICE_LIMITS,
  };
}
