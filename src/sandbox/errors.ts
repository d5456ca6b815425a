// Typed sandbox errors. Temporal matches `nonRetryableErrorTypes` against `error.name` (the class
// name, set by SaasbenchError); each class's `nonRetryable` is also listed in ERROR_TYPES (src/errors.ts).
import { SaasbenchError } from '../errors';

export abstract class SandboxError extends SaasbenchError {}

/** The compose file is invalid or uses something saasbench does not support. Retrying won't help. */
export class ComposeError extends SandboxError {
  static override readonly nonRetryable = true;
  /** JSON path inside the file, e.g. `services.app.ports[0]`; '' for the whole file. */
  readonly path: string;
  readonly file: string;
  /** the problem alone, without file and path */
  readonly sentence: string;
  constructor(file: string, path: string, sentence: string, options?: { cause?: unknown }) {
    super(`${file}${path ? `: ${path}` : ''}: ${sentence}`, options);
    this.file = file;
    this.path = path;
    this.sentence = sentence;
  }
}

/** Docker daemon trouble, a container that would not start or become healthy, a failed build. */
export class SandboxInfraError extends SandboxError {
  static override readonly nonRetryable = false;
}

/** An `image:` service refers to an image that is neither local nor pullable. */
export class ImageMissingError extends SandboxError {
  static override readonly nonRetryable = true;
  constructor(
    readonly service: string,
    readonly image: string,
    detail?: string,
  ) {
    super(
      `service "${service}": image "${image}" is not present locally and could not be pulled` +
        (detail ? ` (${detail})` : '') +
        '; build or load it first (no registry is assumed)',
    );
  }
}

/** The caller passed something malformed (bad rollout key, missing image for a service, ...). */
export class SandboxInputError extends SandboxError {
  static override readonly nonRetryable = true;
}

/** Status code of a dockerode/docker-modem error, if any. */
export function dockerStatus(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

export function isNotFound(err: unknown): boolean {
  return dockerStatus(err) === 404;
}

/** Wraps a non-sandbox error from the docker API into a retryable infra error. */
export function infra(what: string, err: unknown): SandboxError {
  if (err instanceof SandboxError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  return new SandboxInfraError(`${what}: ${msg}`, { cause: err });
}
