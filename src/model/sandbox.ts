// Shapes the sandbox hands to every layer above it (activities, agents, primitives, workflows):
// they live here so workflow code and plain data carriers need not import the sandbox itself.
import { z } from 'zod';

/** What a command run in a sandbox container returned. */
export const ExecResult = z.object({
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
});
export type ExecResult = z.infer<typeof ExecResult>;

/**
 * A running rollout stack as the backend reports it. It crosses activity boundaries (it is part of
 * RolloutRef), so it is plain JSON. `ports` maps a container port ("8080/tcp") to the port the
 * backend published it on; which host that port is on is the backend's business (endpoint()).
 */
export const StackHandle = z.object({
  rolloutKey: z.string(),
  project: z.string(),
  network: z.string(),
  services: z.record(
    z.string(),
    z.object({
      container: z.string(),
      ports: z.record(z.string(), z.number().int()),
    }),
  ),
});
export type StackHandle = z.infer<typeof StackHandle>;

/** Where this process reaches a published service port. */
export interface Endpoint {
  host: string;
  port: number;
  /** http://host:port (IPv6 hosts bracketed) */
  url: string;
}
