import type { SetupItem } from '../model/setup';
import type { Json } from '../model/json';
import { registerSecret } from '../log';
import type { DagNode } from '../model/dag';
import { runNode } from './run-chain';
import type { PrimitiveEnv, TaskSetupPort } from './types';
import { SaasbenchError, isInfraFailure } from '../errors';


/** Runs per running system (cache key: the stack's project); a failure is forgotten so a later node retries. */
const cache = new Map<string, Promise<Record<string, Json>>>();

export class SetupFailed extends SaasbenchError {
  static override readonly nonRetryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'SetupFailed';
  }
}

async function runItem(item: SetupItem, index: number, env: PrimitiveEnv, vars: Record<string, Json>): Promise<Record<string, Json>> {
  const node: DagNode = {
    id: `PACK_SETUP_${index}`,
    description: item.description,
    prereqs: [],
    chain: item.chain,
    scoring: { category: 'Setup', subcategory: '', method: 'binary', maxScore: 1 },
  };
  // the setup's own chain cannot read setup values (no recursion)
  const run = await runNode(node, { ...env, taskSetup: undefined }, { judgeEnabled: false, vars });
  for (const n of item.secret) if (typeof run.exports[n] === 'string') registerSecret(run.exports[n] as string);
  const missing = item.exports.filter((n) => run.exports[n] === undefined);
  if (run.status !== 'PASSED' || missing.length) throw new SetupFailed(`setup[${index}] (${item.description.slice(0, 80)}): ${run.message}${missing.length ? `; not captured: ${missing.join(', ')}` : ''}`);
  return Object.fromEntries(item.exports.map((n) => [n, run.exports[n]]));
}

/** The setup port of a task: the values of the setups that provide `names`. */
export function taskSetupPort(items: readonly SetupItem[], cacheKey: string): TaskSetupPort {
  const exportNames = new Set(items.flatMap((s) => s.exports));
  return {
    provides: (name) => exportNames.has(name),
    async values(names, env, vars) {
      const values: Record<string, Json> = {};
      const failures: string[] = [];
      for (const [i, item] of items.entries()) {
        if (!item.exports.some((n) => names.includes(n))) continue;
        const key = `${cacheKey}|${i}|${JSON.stringify(item)}`;
        let p = cache.get(key);
        if (!p) {
          p = runItem(item, i, env, vars);
          cache.set(key, p);
          p.catch(() => cache.delete(key));
        }
        try {
          Object.assign(values, await p);
        } catch (e) {
          // host trouble is retried with the whole node (run-chain), not recorded as a setup failure
          if (isInfraFailure(e)) throw e;
          failures.push((e as Error).message);
        }
      }
      return { values, failures };
    },
  };
}
