export { rolloutWorkflow, progressQuery } from './rollout';
export { sweepWorkflow, sweepProgressQuery, stopSweepSignal } from './sweep';
