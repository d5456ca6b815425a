import type { Json } from './json';
import type { RolesDecl } from './roles';
import type { SetupItem } from './setup';
import type { Dag } from './dag';
import type { DatabaseTarget } from './database';

/** A loaded task, whichever layout it came from. Paths are absolute. */
export interface Task {
  id: string;
  title: string;
  dir: string;
  layout: 'native' | 'published';
  manifestFile: string;
  prdFile: string | null;
  knowledgeBaseFile: string | null;
  promptText: string;
  environment: {
    composeFile: string;
    appService: string;
    workspace: string;
    appPort: number;
    database?: DatabaseTarget;
    /** further databases by name (P08–P11 `database: <name>`) */
    databases?: Record<string, DatabaseTarget>;
    /** env files to try when a compose `env_file` is missing (published tasks ship only .env.example) */
    envFileFallbacks?: string[];
    /** interpolation variables over `.env` and the shell (published tasks: IMAGE_TAG=model, APP_CMD) */
    composeEnv?: Record<string, string>;
  };
  dagFile: string;
  dag: Dag;
  /** the task declares that its nodes may be evaluated in parallel (task.yaml evaluation.parallelSafe) */
  parallelSafe?: boolean;
  solution?: { dir: string; start: string };
  variables: Record<string, Json>;
  /** upstream codebases the agent must not clone or download (task.yaml forbiddenSources) */
  forbiddenSources?: string[];
  /** packages the agent must not install (published: the benchmark pack; `*` wildcards) */
  forbiddenLibraries?: string[];
  /** container images the agent must not pull or run (published: the benchmark pack; `*` wildcards) */
  forbiddenImages?: string[];
  /** how the evaluator obtains each role's credentials (task.yaml `roles:`; none for published tasks) */
  roles: RolesDecl;
  /** copy id-like fields of 2xx JSON responses into chain variables (published tasks; task.yaml `compat:`) */
  publishedIdCapture: boolean;
  /** date/time variables computed once per evaluation (src/primitives/run-clock.ts family; published tasks: the pack's `clock`) */
  clock?: string;
  /** declared setups run once per running system, whose captures become variables (published tasks: the pack's `setup`) */
  setup?: SetupItem[];
  /** resource limits of the agent's container (task.yaml `limits`); unset fields take the defaults */
  limits?: { cpus?: number; memoryBytes?: number; pids?: number };
  /** the agent's outbound network (task.yaml `network`): hosts reachable through the egress proxy */
  network?: { allow: string[] };
  /** sha256 over the task folder's files (reference-solution dependencies excluded) */
  hash: string;
  /** published primitive types this build cannot run yet, with counts */
  unsupported: Record<string, number>;
}
