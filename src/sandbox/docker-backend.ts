// The Docker engine behind the sandbox seam (backend.ts). The engine may be remote (DOCKER_HOST=
// tcp://…): published ports are then reached on that host, never assumed on 127.0.0.1.
import type { SandboxBackend } from './backend';
import { docker } from './client';
import { SandboxInfraError, infra } from './errors';
import { exec, execBytes } from './exec';
import { execDetached } from './exec-detached';
import { prewarmExec } from './exec-warm';
import { copyDirInto, readFile, writeFiles } from './files';
import { dockerHostAddress, hostUrl } from './host';
import { LABEL } from './naming';
import { downStack, reapStacks } from './stack-state';
import { upStack } from './stack-up';
import { demuxLogs } from './docker-logs';

export function dockerBackend(opts: { hostAddress?: string } = {}): SandboxBackend {
  const host = opts.hostAddress ?? dockerHostAddress();
  return {
    kind: 'docker',
    up: upStack,
    down: downStack,
    reap: reapStacks,
    exec,
    execBytes,
    execDetached,
    prewarm: prewarmExec,
    readFile,
    writeFiles,
    copyDir: copyDirInto,
    async extractArchive(container, destDir, archive) {
      try {
        // the engine unpacks gzip, bzip2 and xz archives itself
        await docker().getContainer(container).putArchive(archive, { path: destDir });
      } catch (err) {
        throw infra(`unpacking an archive into ${destDir} in ${container}`, err);
      }
    },
    async logs(container, tail) {
      try {
        const buf = (await docker().getContainer(container).logs({ stdout: true, stderr: true, tail, follow: false })) as unknown as Buffer;
        return demuxLogs(buf);
      } catch (err) {
        throw infra(`logs of ${container}`, err);
      }
    },
    endpoint(stack, service, port) {
      const hostPort = stack.services[service]?.ports[`${port}/tcp`];
      if (!hostPort) throw new SandboxInfraError(`service ${service} publishes no port ${port} in stack ${stack.project}`);
      return { host, port: hostPort, url: hostUrl(host, hostPort) };
    },
    gateway: gatewayOf,
    async startSidecar(spec) {
      try {
        const c = docker().getContainer(spec.name);
        const info = await c.inspect().catch(() => null);
        if (info?.State.Running) return spec.name;
        if (info) await c.remove({ force: true });
        const created = await docker().createContainer({
          name: spec.name,
          Image: spec.image,
          Cmd: ['sleep', 'infinity'],
          Env: spec.env ?? [],
          Labels: { [LABEL.rollout]: spec.rolloutKey, [LABEL.task]: spec.taskId, [LABEL.managed]: 'true', 'saasbench.role': spec.role },
          // hardened like the agent's container: no raw sockets, no setuid escalation
          HostConfig: { NetworkMode: spec.network, Binds: spec.binds ?? [], Init: true, CapDrop: ['NET_RAW'], SecurityOpt: ['no-new-privileges:true'] },
        });
        await created.start();
        return spec.name;
      } catch (err) {
        throw infra(`starting sidecar ${spec.name}`, err);
      }
    },
    async addresses(container) {
      const info = await docker().getContainer(container).inspect().catch(() => null);
      return Object.values(info?.NetworkSettings?.Networks ?? {})
        .map((n) => n.IPAddress)
        .filter((a): a is string => !!a);
    },
  };
}


/**
 * The bridge network's IPAM gateway, else the member container's default route. Not cached: a
 * stack re-created under the same network name (a provision retry) may get another subnet.
 */
async function gatewayOf(network: string, container: string): Promise<string> {
  try {
    const info = (await docker().getNetwork(network).inspect()) as { IPAM?: { Config?: { Gateway?: string }[] } };
    const gw = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
    if (gw) return gw;
  } catch {
    // fall through to the route table
  }
  const r = await exec(container, ['cat', '/proc/net/route']);
  for (const line of r.stdout.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === '00000000' && f[2] && f[2] !== '00000000') {
      const n = Number.parseInt(f[2], 16);
      return [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255].join('.');
    }
  }
  throw new SandboxInfraError(`cannot find the gateway of network ${network} (container ${container})`);
}
