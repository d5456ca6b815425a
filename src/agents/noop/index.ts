import type { AgentDriver } from '../types';

/** Does nothing: the floor of the benchmark (an empty workspace). */
export const noopAgent: AgentDriver = {
  name: 'noop',
  launch: () => ({ script: 'exit 0' }),
  resume: () => ({ script: 'exit 0' }),
};
