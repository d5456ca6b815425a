/**
 * The OpenHands sidecar as the driver starts it (docs/security.md, "OpenHands"): a container of the
 * rollout, on the rollout's network only (no host network, no default bridge), without the Docker
 * socket. What it is given:
 *  - the OpenHands venv, read-only, and the rollout's OpenHands folder (config, task, trajectory);
 *  - the host's CA bundle and proxy/pip settings (hostTrustArgs);
 *  - DOCKER_HOST = the rollout's exec proxy on the gateway (src/security/exec-proxy.ts), so
 *    `docker exec <app container> …` works and every other engine call is refused;
 *  - its model only through the relay token, in config.toml, on the gateway.
 * Built in one place so the isolation test starts exactly this container with a stand-in image.
 */
import type { SidecarSpec } from '../../sandbox/backend';
import { AgentConfigError } from '../../errors';
import type { AgentContext } from '../types';
import { hostTrustArgs } from './runtime';

/** Inside the sidecar: the rollout's OpenHands folder (bind-mounted from <runDir>/openhands). */
export const OH_DIR = '/saasbench/openhands';

export function sidecarName(ctx: Pick<AgentContext, 'stack'>): string {
  return `${ctx.stack.project}-openhands`;
}

export interface SidecarInputs {
  image: string;
  /** the OpenHands venv on the worker host (mounted read-only at the same path) */
  venv: string;
  /** <runDir>/openhands on the worker host */
  hostDir: string;
}

/** The sidecar's container spec. DOCKER_HOST comes from the agent network (ctx.extraEnv). */
export function openhandsSidecarSpec(ctx: Pick<AgentContext, 'stack' | 'rolloutKey' | 'task' | 'extraEnv'>, s: SidecarInputs): SidecarSpec {
  const dockerHost = ctx.extraEnv?.DOCKER_HOST;
  if (!dockerHost?.startsWith('tcp://')) throw new AgentConfigError('openhands: no exec proxy for the app container (DOCKER_HOST unset): the sidecar gets no Docker socket');
  const trust = hostTrustArgs();
  const binds = [`${s.venv}:${s.venv}:ro`, `${s.hostDir}:${OH_DIR}`];
  const env: string[] = [`DOCKER_HOST=${dockerHost}`];
  for (let i = 0; i < trust.length; i += 2) {
    if (trust[i] === '-v') binds.push(trust[i + 1]);
    // the worker's own proxy/pip settings point at places the rollout network cannot reach
    else if (!/^(https?_proxy|no_proxy|pip_)/i.test(trust[i + 1])) env.push(trust[i + 1]);
  }
  // the egress proxy's variables (and NO_PROXY for the gateway) reach OpenHands' own subprocesses too
  for (const [k, v] of Object.entries(ctx.extraEnv ?? {})) if (k !== 'DOCKER_HOST') env.push(`${k}=${v}`);
  return { name: sidecarName(ctx), rolloutKey: ctx.rolloutKey, taskId: ctx.task.id, image: s.image, env, binds, network: ctx.stack.network, role: 'agent-sidecar' };
}
