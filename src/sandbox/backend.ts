// The sandbox seam: everything above src/sandbox reaches containers through this interface, never
// through the Docker client. The Docker engine (docker-backend.ts) is the first implementation;
// tests drive real code through an in-memory one (test/helpers/memory-backend.ts). Pick one with
// the factory (factory.ts).
import type { Endpoint, ExecResult, StackHandle } from '../model/sandbox';
import type { ExecBytesResult, ExecOptions } from './exec';
import type { Detached, ExecDetachedOptions } from './exec-detached';
import type { FileToWrite, OwnerOptions } from './files';
import type { UpStackOptions } from './stack-up';

export type { Detached, Endpoint, ExecResult, ExecBytesResult, StackHandle, ExecOptions, ExecDetachedOptions, FileToWrite, OwnerOptions, UpStackOptions };

export interface SidecarSpec {
  name: string;
  rolloutKey: string;
  taskId: string;
  image: string;
  env?: string[];
  /** host:container[:ro] */
  binds?: string[];
  /** the only network the sidecar joins (the rollout's): never the host's, never the default bridge */
  network: string;
  /** the saasbench.role label, e.g. agent-sidecar */
  role: string;
}

export interface SandboxBackend {
  /** 'docker', 'memory', …: recorded in logs, never switched on outside src/sandbox */
  readonly kind: string;
  /** create (or re-adopt) a rollout's stack; idempotent per rollout key */
  up(opts: UpStackOptions): Promise<StackHandle>;
  /** remove everything the rollout owns; idempotent */
  down(rolloutKey: string): Promise<{ removed: { containers: number; networks: number; volumes: number } }>;
  /** remove the stacks `isLive` disowns; the keys removed */
  reap(isLive: (rolloutKey: string) => Promise<boolean>): Promise<string[]>;
  /** run `cmd` (argv) in a container and collect its output */
  exec(container: string, cmd: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** the same with stdout as bytes, never truncated (archives and dumps streamed out in one call) */
  execBytes(container: string, cmd: string[], opts?: ExecOptions): Promise<ExecBytesResult>;
  /** start `script` in its own session so it outlives the call (agents, servers) */
  execDetached(container: string, script: string, opts: ExecDetachedOptions): Promise<Detached>;
  /**
   * Get ready for an execDetached into `container` soon (the agent's launch): optional, never
   * throws, and nothing is lost when no launch comes.
   */
  prewarm?(container: string): void;
  /** a regular file's contents (symlinks followed); null when it does not exist */
  readFile(container: string, path: string, opts?: { maxBytes?: number }): Promise<Buffer | null>;
  /** write files (contents given, or host files streamed) under an absolute directory */
  writeFiles(container: string, destDir: string, files: FileToWrite[], opts?: OwnerOptions): Promise<void>;
  /** copy a host directory's contents into an absolute directory */
  copyDir(container: string, hostDir: string, destDir: string, opts?: { exclude?: string[] } & OwnerOptions): Promise<void>;
  /** unpack a tar archive (plain or gzipped) into an absolute directory (re-scoring restores a workspace) */
  extractArchive(container: string, destDir: string, archive: Buffer): Promise<void>;
  /** the last `tail` lines a container wrote to stdout/stderr */
  logs(container: string, tail: number): Promise<string>;
  /** where this process reaches `service`'s container port `port` (published by up()) */
  endpoint(stack: StackHandle, service: string, port: number): Endpoint;
  /**
   * The address containers on `network` reach this process at (the bridge gateway); `container`
   * is a member to ask when the network itself does not say.
   */
  gateway(network: string, container: string): Promise<string>;
  /**
   * Start (or keep, when it already runs) a helper container owned by the rollout, removed by
   * down(): OpenHands' host-side runtime. Returns its name, to exec in.
   */
  startSidecar(spec: SidecarSpec): Promise<string>;
  /** a container's own addresses on its networks (the transcript audit tells them from escapes) */
  addresses(container: string): Promise<string[]>;
}
