import * as net from 'node:net';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeImage, venvDir } from '../../src/agents/openhands/runtime';

function installed(): boolean {
  if (!existsSync(join(venvDir(), '.saasbench-installed'))) return false;
  try {
    execFileSync('docker', ['image', 'inspect', runtimeImage()], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The skip reason of the real-OpenHands tests, or false when they run: installing OpenHands takes
 * minutes, so they run where it is installed or where SAASBENCH_TEST_OPENHANDS=1 asks for it.
 */
export function openhandsSkip(): string | false {
  return process.env.SAASBENCH_TEST_OPENHANDS === '1' || installed() ? false : 'OpenHands runtime not installed (node dist/src/agents/openhands/runtime.js, or SAASBENCH_TEST_OPENHANDS=1)';
}

/**
 * A service on the worker host that the OpenHands sidecar must never reach (the hostile tests):
 * listens on host, any port, and records each connection it accepts in `accepted`.
 */
export async function hostTrap(host: string, accepted: string[]): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer((c) => {
    accepted.push(`${host} <- ${c.remoteAddress}`);
    c.on('error', () => undefined);
    c.end('worker host service\n');
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return { server, port: (server.address() as net.AddressInfo).port };
}
