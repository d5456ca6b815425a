/**
 * The published SaaSBench DAGs were written against thirty forked evaluators, so one input is
 * spelled several ways (`op` / `operator`, `capture_as` / `store_as` / `save_as`, …) and one type
 * id can mean different things per task. A dialect reads one published type's inputs and returns
 * the canonical step (type + inputs of src/primitives/), recording every spelling it mapped so the
 * mapping table in docs/compatibility.md is generated from what the loader actually did.
 */

export interface DialectContext {
  /** the published task id without `task_` (e.g. `aoiwqoiq`): some spellings mean different things per task */
  readonly task: string;
  readonly nodeId: string;
  /** JSON path of this step in the published file, e.g. `nodes[3].primitive_chain[1]` */
  readonly at: string;
  /**
   * Record that a published spelling was read as a canonical input. `spelling` and `canonical`
   * are short key paths (`assertions[].op`, `operator`); `meaning` says what it does.
   */
  spelling(spelling: string, canonical: string, meaning: string): void;
  /**
   * The node's published chain as written (raw steps, before any dialect ran) and this step's index
   * in it; set for steps. A step's meaning can depend on its neighbours (which request a published
   * `{{step_N}}` names, whether the response a check reads came from a command or an HTTP call).
   */
  readonly chain?: readonly unknown[];
  readonly index?: number;
  /** An input that cannot be honoured: a load-time issue at `path` under this step (`inputs.x`). */
  issue(path: string, message: string): void;
}

export interface CanonicalStep {
  type: string;
  inputs: Record<string, unknown>;
}

export interface StepDialect {
  /** the published step types this dialect reads, upper case (`P07`) */
  readonly types: readonly string[];
  /**
   * Map the published inputs onto the canonical step. Must not drop a key silently: a key is
   * either mapped onto a canonical input, kept as a note (`_`-prefixed keys, `comment`, …: see
   * takeNotes), or reported with ctx.issue. Inputs it does not know are left in place so the
   * canonical schema rejects them with their path.
   */
  normalize(type: string, inputs: Record<string, unknown>, ctx: DialectContext): CanonicalStep;
}

/** One use of a published spelling, for the compatibility table. */
export interface SpellingUse {
  primitive: string;
  spelling: string;
  canonical: string;
  meaning: string;
  task: string;
}
