import type * as Rollout from './rollout';
import type * as Sweep from './sweep';
import type * as Governor from './governor';

/*
 * The workflow bundle's entry. The SDK instantiates the bundle's modules afresh for every workflow
 * run, so each workflow type loads its own module on first use: a rollout (one run per rollout)
 * does not build the sweep's modules and their zod schemas (~0.02 s of CPU per run here:
 * bench/sweep-overhead.ts). The SDK looks a workflow up by its exported name.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
export const rolloutWorkflow: typeof Rollout.rolloutWorkflow = (...a) => (require('./rollout') as typeof Rollout).rolloutWorkflow(...a);
export const sweepWorkflow: typeof Sweep.sweepWorkflow = (...a) => (require('./sweep') as typeof Sweep).sweepWorkflow(...a);
export const governorWorkflow: typeof Governor.governorWorkflow = (...a) => (require('./governor') as typeof Governor).governorWorkflow(...a);
