// Creates the sandbox backend (backend.ts) the worker, the CLI and local evaluation hand to
// activities, agents and primitives. SAASBENCH_SANDBOX picks it; 'docker' is the only production
// backend today. Tests install their own (an in-memory fake, a fault-injecting wrapper) with
// setSandboxBackend.
import type { SandboxBackend } from './backend';
import { dockerBackend } from './docker-backend';
import { SandboxInputError } from './errors';

const BACKENDS: Record<string, () => SandboxBackend> = {
  docker: () => dockerBackend(),
};

/** A new backend of the given kind (default: SAASBENCH_SANDBOX, else docker). */
export function createSandboxBackend(kind = process.env.SAASBENCH_SANDBOX?.trim() || 'docker'): SandboxBackend {
  const make = BACKENDS[kind];
  if (!make) throw new SandboxInputError(`SAASBENCH_SANDBOX=${kind}: unknown sandbox backend (known: ${Object.keys(BACKENDS).join(', ')})`);
  return make();
}

let current: SandboxBackend | undefined;

/** The process's backend, created on first use. */
export function sandboxBackend(): SandboxBackend {
  current ??= createSandboxBackend();
  return current;
}

/** Replace the process's backend (tests; a worker bound to another engine). undefined = recreate on next use. */
export function setSandboxBackend(b: SandboxBackend | undefined): void {
  current = b;
}
