export { provision } from './provision';
export { prepareWorkspace } from './prepare-workspace';
export { runAgent } from './run-agent';
export { evaluateNode } from './evaluate-node';
export { persistResults } from './persist';
export { teardown } from './teardown';
