/**
 * The governor workflow's messages, shared by the workflow (src/workflows/governor.ts) and its
 * clients (client.ts). Only definitions: this file goes into the workflow bundle.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AcquireAnswer, AcquireRequest, GovernorSnapshot, ReleaseRequest } from '../model/governor';

export const acquireUpdate = defineUpdate<AcquireAnswer, [AcquireRequest]>('acquire');
export const releaseSignal = defineSignal<[ReleaseRequest]>('release');
export const renewSignal = defineSignal<[{ leaseIds: string[] }]>('renew');
export const governorStateQuery = defineQuery<GovernorSnapshot>('governorState');

/** the workflow type (its function's name in src/workflows/governor.ts) */
export const GOVERNOR_WORKFLOW = 'governorWorkflow';
export const governorWorkflowId = (provider: string) => `saasbench-governor-${provider}`;
