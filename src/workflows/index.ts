export { rolloutWorkflow, progressQuery } from './rollout';
