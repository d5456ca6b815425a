// Waiting for depends_on conditions by polling container state. Failures carry the last health
// probe output or the container's log tail, because "unhealthy" alone is useless to debug.
import type Dockerode from 'dockerode';
import type { ServiceSpec } from './compose-schema';
import { docker } from './client';
import { demuxLogs } from './docker-logs';
import { SandboxInfraError, infra } from "./errors";

export type Condition = ServiceSpec['dependsOn'][string];

const POLL_MS = 500;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitForCondition(
  container: string,
  service: string,
  condition: Condition,
  deadline: number,
): Promise<void> {
  const c = docker().getContainer(container);
  for (;;) {
    const info = await c.inspect().catch((err: unknown) => {
      throw infra(`inspecting ${container} (service "${service}")`, err);
    });
    const st = info.State;
    if (condition === 'service_completed_successfully') {
      if (st.Status === 'exited' || st.Status === 'dead') {
        if (st.ExitCode === 0) return;
        throw new SandboxInfraError(`service "${service}" exited with code ${st.ExitCode}${await logTail(c)}`);
      }
    } else {
      if (!st.Running && st.Status !== 'created' && st.Status !== 'restarting') {
        throw new SandboxInfraError(`service "${service}" is ${st.Status} (exit code ${st.ExitCode})${await logTail(c)}`);
      }
      if (condition === 'service_started' && st.Running) return;
      if (condition === 'service_healthy') {
        const health = st.Health;
        if (!health) throw new SandboxInfraError(`service "${service}" is awaited as service_healthy but has no healthcheck`);
        if (health.Status === 'healthy') return;
        if (health.Status === 'unhealthy') {
          throw new SandboxInfraError(`service "${service}" is unhealthy${lastProbe(info)}`);
        }
      }
    }
    if (Date.now() > deadline) {
      throw new SandboxInfraError(
        `timed out waiting for service "${service}" to reach ${condition} (state ${st.Status}` +
          `${st.Health ? `, health ${st.Health.Status}` : ''})${lastProbe(info)}`,
      );
    }
    await sleep(POLL_MS);
  }
}

function lastProbe(info: Dockerode.ContainerInspectInfo): string {
  const log = info.State.Health?.Log ?? [];
  const last = log[log.length - 1];
  return last ? `; last health probe exited ${last.ExitCode}: ${String(last.Output).trim().slice(-2000)}` : '';
}

async function logTail(c: Dockerode.Container): Promise<string> {
  try {
    const buf = (await c.logs({ stdout: true, stderr: true, tail: 30, follow: false })) as unknown as Buffer;
    // Non-TTY logs are multiplexed with 8-byte frame headers; strip them for readability.
    const text = demuxLogs(buf);
    return text.trim() ? `; last log lines:\n${text.trim()}` : '';
  } catch {
    return '';
  }
}
