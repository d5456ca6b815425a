export { rolloutWorkflow, progressQuery } from './rollout';
export { sweepWorkflow, sweepProgressQuery, stopSweepSignal } from './sweep';
export { governorWorkflow } from './governor';
