// Charts are compiled once per shape and get their values by name (src/report/html/charts.ts):
// the SVG must be what compiling each chart with its values inline gives, for every chart kind,
// whatever was drawn before with the same shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { barSpec, groupedBarSpec, heatmapSpec, renderChart, renderChartInline } from '../../src/report/html/charts';
import { timelineSpec } from '../../src/report/html/trajectory-section';

const timeline = (k: number) =>
  timelineSpec([
    { row: 'rollout', phase: 'provision', start: 0, end: 0.5 * k },
    { row: 'rollout', phase: 'agent', start: 0.5 * k, end: 2 * k },
    { row: 'rollout', phase: 'evaluation', start: 2 * k, end: 2.2 * k + 1 },
  ] as Parameters<typeof timelineSpec>[0]);

test('a chart drawn from the shape cache is the chart compiled with its values, for each kind and after others of its shape', async () => {
  const specs = [
    timeline(1),
    timeline(7),
    barSpec('Per backbone', [{ label: 'API', value: 50 }, { label: 'DB', value: null }]),
    barSpec('Per backbone', [{ label: 'UI', value: 100 }]),
    groupedBarSpec('Per task', [{ group: 't1', series: 'a', value: 10 }, { group: 't2', series: 'b', value: 90 }], 'task'),
    heatmapSpec('Per category', [{ row: 'x', col: 'a', value: 12.5 }, { row: 'y', col: 'a', value: null }], 'category'),
    timeline(3),
  ];
  const seen = new Set<string>();
  for (const spec of specs) {
    // vega numbers gradients by a counter of its own across renders: not a difference
    const norm = (svg: string) => svg.replace(/gradient_\d+/g, 'gradient_N');
    const [cached, inline] = [norm(await renderChart(spec)), norm(await renderChartInline(spec))];
    assert.ok(inline.includes('<svg'), 'an SVG');
    let at = 0;
    while (at < cached.length && cached[at] === inline[at]) at++;
    assert.ok(cached === inline, `${JSON.stringify(spec).slice(0, 60)}: differs at ${at}: ${cached.slice(at, at + 80)} | ${inline.slice(at, at + 80)}`);
    seen.add(cached);
  }
  assert.equal(seen.size, specs.length, 'each set of values drew its own chart');
});
