/**
 * The agent phase's network: what the agent's container may reach on the worker host while the
 * agent runs, and nothing after. Opens the rollout firewall (src/sandbox/firewall.ts) for the LLM
 * relay's port and the egress proxy's port on the bridge gateway, starts the egress proxy
 * (src/security/egress-proxy.ts) with the task's `network.allow`, and hands back the proxy
 * environment for every agent launch. An agent that runs in a sidecar container (OpenHands) also
 * gets the exec proxy (src/security/exec-proxy.ts: exec into the app container and nothing else of
 * the engine) on the gateway, and DOCKER_HOST pointing at it. `close()` closes every port again, so
 * during evaluation the app has no way out at all. Records the result in `<runDir>/isolation.json`.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { writeJson } from '../runs/files';
import { closeHostPort, firewallPlan, openHostPort, openPorts, type FirewallStatus } from '../sandbox/firewall';
import { startEgressProxy } from './egress-proxy';
import { startExecProxy, type ExecProxy } from './exec-proxy';

export interface AgentNetworkOptions {
  rolloutKey: string;
  /** the stack's compose project (names the firewall chains) */
  project: string;
  /** the bridge gateway address (llm-relay's gatewayOf) */
  gateway: string;
  runDir: string;
  /** task.yaml network.allow */
  allow: string[];
  /** the LLM relay's port on the gateway, when the agent has one */
  relayPort?: number;
  /** names that must not go through the proxy (the stack's services) */
  noProxy: string[];
  /** the app container a sidecar agent may exec into (starts the exec proxy) */
  execInto?: { container: string; containerId?: string };
  log?: Logger;
}

export interface AgentNetwork {
  env: Record<string, string>;
  proxyUrl: string;
  firewall: FirewallStatus;
  /** the exec proxy's port on the gateway, when `execInto` was given */
  execProxyPort?: number;
  close(): Promise<void>;
}

/**
 * Firewall openings held per (project, gateway, port). The proxies and the relay are shared by
 * overlapping attempts of one rollout in one worker (a heartbeat timeout schedules attempt 2 while
 * attempt 1 is still winding down), so the port they listen on must stay open until the LAST
 * holder closes: attempt 1 closing it would cut attempt 2's agent off its relay.
 */
const held = new Map<string, number>();
async function holdPort(project: string, gateway: string, port: number): Promise<void> {
  const k = `${project}|${gateway}|${port}`;
  const n = held.get(k) ?? 0;
  if (n === 0) await openHostPort(project, gateway, port);
  held.set(k, n + 1);
}
async function releasePort(project: string, gateway: string, port: number): Promise<void> {
  const k = `${project}|${gateway}|${port}`;
  const n = (held.get(k) ?? 1) - 1;
  if (n > 0) {
    held.set(k, n);
    return;
  }
  held.delete(k);
  await closeHostPort(project, gateway, port);
}

export async function openAgentNetwork(o: AgentNetworkOptions): Promise<AgentNetwork> {
  const firewall = await firewallPlan();
  const proxy = await startEgressProxy({
    key: o.rolloutKey,
    bindHost: o.gateway,
    allow: o.allow,
    // a client that ignores NO_PROXY sends its relay calls through the proxy: let them pass
    alwaysAllow: o.relayPort ? [{ host: o.gateway, port: o.relayPort }] : [],
    stateDir: join(o.runDir, 'agent'),
    log: o.log,
  });
  let exec: ExecProxy | undefined;
  const ports = [proxy.port, ...(o.relayPort ? [o.relayPort] : [])];
  const opened: number[] = [];
  let closed = false;
  try {
    if (o.execInto) {
      exec = await startExecProxy({ key: o.rolloutKey, bindHost: o.gateway, ...o.execInto, stateDir: join(o.runDir, 'agent'), log: o.log });
      ports.push(exec.port);
    }
    for (const p of ports) {
      await holdPort(o.project, o.gateway, p);
      opened.push(p);
    }
  } catch (err) {
    for (const p of opened) await releasePort(o.project, o.gateway, p).catch(() => undefined);
    await exec?.close();
    await proxy.close();
    throw err;
  }
  writeJson(join(o.runDir, 'isolation.json'), {
    gateway: o.gateway,
    firewall: firewall.applied ? 'on' : `off: ${firewall.reason}`,
    hostPortsOpenDuringAgent: await openPorts(o.project),
    egressProxy: proxy.url,
    egressAllow: o.allow,
    relayPort: o.relayPort ?? null,
    execProxy: exec ? { port: exec.port, container: o.execInto!.container } : null,
  });
  return {
    env: { ...proxy.env([o.gateway, ...o.noProxy]), ...(exec ? { DOCKER_HOST: exec.dockerHost } : {}) },
    proxyUrl: proxy.url,
    firewall,
    execProxyPort: exec?.port,
    async close() {
      // once per opening: a second close must not release another attempt's hold
      if (closed) return;
      closed = true;
      for (const p of opened) await releasePort(o.project, o.gateway, p).catch((err: Error) => o.log?.warn({ err: err.message, port: p }, 'closing a firewall port failed'));
      await exec?.close();
      await proxy.close();
    },
  };
}
