import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDag } from '../../src/tasks/validate-dag';
import { addPublishedContextEdges } from '../../src/tasks/published/context-edges';
import { checkPlaceholders } from '../../src/tasks/placeholders';

const node = (id: string, prereqs: string[], chain: unknown[]) => ({ id, prereqs, primitive_chain: chain, scoring: { category: 'API', subcategory: 'x', method: 'binary', maxScore: 1 } });
const get = (path: string) => ({ type: 'P04', inputs: { method: 'GET', path } });
const capture = (path: string, name: string) => ({ type: 'P04', inputs: { method: 'POST', path, capture: { [name]: '$.id' } } });

test('a placeholder captured only by an earlier non-prereq node gets an ordering edge; later producers do not', () => {
  const raw = {
    nodes: [
      node('HEALTH', [], [get('/health')]),
      node('CART', ['HEALTH'], [capture('/carts', 'cart_id')]),
      node('USE_CART', ['HEALTH'], [get('/carts/{{cart_id}}')]),
      node('USE_LATER', [], [get('/orders/{{order_id}}')]),
      node('ORDER', [], [capture('/orders', 'order_id')]),
    ],
  };
  const c = checkDag(raw, 'dag.json');
  assert.deepEqual(c.issues, []);
  assert.equal(checkPlaceholders(c.dag, raw.nodes, { file: 'dag.json', variables: [] }).length, 2);
  const r = addPublishedContextEdges(c.dag, raw.nodes, []);
  assert.deepEqual(r, { edges: 1, nodes: 1 });
  assert.deepEqual(c.dag.nodes.find((n) => n.id === 'USE_CART')!.after, ['CART']);
  assert.equal(c.dag.nodes.find((n) => n.id === 'USE_LATER')!.after, undefined, 'ORDER runs later in the published order: no edge');
  const left = checkPlaceholders(c.dag, raw.nodes, { file: 'dag.json', variables: [] });
  assert.deepEqual(left.map((i) => i.nodeId), ['USE_LATER']);
});
