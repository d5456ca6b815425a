/**
 * Typed errors. The class name is the Temporal failure type, so retry policy is declared by
 * listing names in `nonRetryableErrorTypes` (see NON_RETRYABLE below) instead of by matching text.
 */
export abstract class SaasbenchError extends Error {
  abstract readonly nonRetryable: boolean;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export interface InputIssue {
  file: string;
  /** JSON path of the offending value, e.g. `nodes[3].primitive_chain[0].inputs.path` */
  path: string;
  message: string;
  nodeId?: string;
}

export function formatIssue(i: InputIssue): string {
  const where = i.path ? `${i.file}: ${i.path}` : i.file;
  return `${where}${i.nodeId ? ` (node ${i.nodeId})` : ''}: ${i.message}`;
}

/** Bad user input (task, DAG, sweep, flag). Never retried: the same input fails the same way. */
export class InvalidInputError extends SaasbenchError {
  readonly nonRetryable = true;
  constructor(readonly issues: InputIssue[]) {
    super(issues.map(formatIssue).join('\n'));
  }
  static one(file: string, path: string, message: string, nodeId?: string): InvalidInputError {
    return new InvalidInputError([{ file, path, message, nodeId }]);
  }
}

/** The task folder changed between provisioning and evaluation: results would mix two versions. */
export class TaskChangedError extends SaasbenchError {
  readonly nonRetryable = true;
}

/** Docker, filesystem or network trouble on the worker host: worth retrying. */
export class InfraError extends SaasbenchError {
  readonly nonRetryable = false;
}

/** An agent misconfiguration (unknown agent, missing binary, missing key): retrying cannot help. */
export class AgentConfigError extends SaasbenchError {
  readonly nonRetryable = true;
}

export const NON_RETRYABLE = ['InvalidInputError', 'TaskChangedError', 'AgentConfigError', 'AgentLostError', 'ComposeError', 'ImageMissingError', 'ImagePreflightError', 'ImageMapError'];
