// A fault-injecting sandbox backend decorator: the next `count` exec calls throw the error a
// flaky Docker engine gives (SandboxInfraError, retryable), then calls pass through. For tests of
// retry behaviour, e.g. "a check whose Docker exec fails transiently is retried".
import type { SandboxBackend } from '../../src/sandbox/backend';
import { SandboxInfraError } from '../../src/sandbox';

export interface TransientExecFaults {
  backend: SandboxBackend;
  /** exec calls that threw so far */
  readonly injected: number;
  /** faults still to come */
  readonly remaining: number;
  /** arm `n` more faults */
  arm(n: number): void;
}

/** Wrap `inner` so that its next `count` exec calls (optionally only those `match` accepts) fail transiently. */
export function withTransientExecFaults(inner: SandboxBackend, count: number, match: (container: string, cmd: string[]) => boolean = () => true): TransientExecFaults {
  let remaining = count;
  let injected = 0;
  const exec: SandboxBackend['exec'] = async (container, cmd, opts) => {
    if (remaining > 0 && match(container, cmd)) {
      remaining--;
      injected++;
      throw new SandboxInfraError(`exec in ${container}: injected transient fault (connect ECONNRESET)`);
    }
    return inner.exec(container, cmd, opts);
  };
  // everything but exec reaches `inner` unchanged (a Proxy, so methods added to the interface later pass through too)
  const backend = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'exec') return exec;
      if (prop === 'kind') return `${target.kind}+faults`;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return {
    backend,
    get injected() {
      return injected;
    },
    get remaining() {
      return remaining;
    },
    arm(n: number) {
      remaining += n;
    },
  };
}
