import { SaasbenchError } from '../errors';

/** A snapshot a rollout or a fork needs is not in the store (wrong id, another store). */
export class SnapshotMissingError extends SaasbenchError {
  static override readonly nonRetryable = true;
}

/** The rollout's containers are gone from its host (engine restarted, host replaced): the workflow moves it. */
export class HostLostError extends SaasbenchError {
  static override readonly nonRetryable = true;
}
