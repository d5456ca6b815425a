/**
 * Charts for the HTML reports: Vega-Lite specs compiled by vega-lite and rendered to SVG strings
 * by vega's headless View (renderer 'none' → toSVG), in Node, without a browser. The SVG is
 * inlined in the page: no scripts, no CDN.
 *
 * vega 6 is ESM-only with top-level await, so it cannot be require()d from this CommonJS build;
 * it is loaded with a real dynamic import() that TypeScript must not rewrite into require().
 */

type Spec = Record<string, unknown>;
interface VegaModule {
  parse(spec: unknown, config?: unknown): unknown;
  View: new (runtime: unknown, opts: { renderer: 'none' }) => { toSVG(): Promise<string>; finalize(): void; data(name: string, values: unknown[]): unknown };
}
interface VegaLiteModule {
  compile(spec: unknown): { spec: unknown };
}

// eslint-disable-next-line @typescript-eslint/no-implied-eval
const importEsm = new Function('m', 'return import(m)') as (m: string) => Promise<unknown>;
let libs: Promise<{ vega: VegaModule; vl: VegaLiteModule }> | undefined;

function load(): Promise<{ vega: VegaModule; vl: VegaLiteModule }> {
  libs ??= Promise.all([importEsm('vega'), importEsm('vega-lite')]).then(([vega, vl]) => ({ vega: vega as VegaModule, vl: vl as VegaLiteModule }));
  return libs;
}

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const BASE_CONFIG = {
  font: FONT,
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12 },
  title: { fontSize: 14, anchor: 'start' },
};

/** Render a Vega-Lite spec to an SVG string. */
// Rendered charts by spec: a sweep's rollouts often draw the very same chart (every noop rollout of a
// task, say), and vega's compile + parse + SVG costs ~0.3 s a chart (bench/sweep-overhead.ts, persist).
const rendered = new Map<string, string>();
const RENDERED_MAX = 256;

export async function renderChart(spec: Spec): Promise<string> {
  const key = JSON.stringify(spec);
  const hit = rendered.get(key);
  if (hit !== undefined) return hit;
  const svg = await renderChartUncached(spec);
  if (rendered.size >= RENDERED_MAX) rendered.delete(rendered.keys().next().value!);
  rendered.set(key, svg);
  return svg;
}

// Compiled and parsed charts by shape (the spec without its inline values): a rollout's timeline
// differs from the previous rollout's in its numbers only, and vega-lite's compile and vega's parse
// are two thirds of a chart's CPU. The view gets the values by name (test/unit/report-charts.test.ts:
// the same SVG as a chart compiled with them).
const parsed = new Map<string, unknown>();
const PARSED_MAX = 64;
const VALUES = 'saasbench_values';

type Libs = Awaited<ReturnType<typeof load>>;

async function renderChartUncached(spec: Spec): Promise<string> {
  const libs = await load();
  const data = spec.data as { values?: unknown } | undefined;
  const values = Array.isArray(data?.values) ? (data.values as unknown[]) : null;
  const shape = values ? { ...spec, data: { name: VALUES } } : spec;
  const key = JSON.stringify(shape);
  let runtime = parsed.get(key);
  if (runtime === undefined) {
    runtime = compile(libs, shape);
    if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, runtime);
  }
  return svgOf(libs, runtime, values);
}

/** Test seam: one chart compiled with its values inline, as before the shape cache. */
export async function renderChartInline(spec: Spec): Promise<string> {
  const libs = await load();
  return svgOf(libs, compile(libs, spec), null);
}

function compile({ vega, vl }: Libs, spec: Spec): unknown {
  return vega.parse(vl.compile({ $schema: 'https://vega.github.io/schema/vega-lite/v6.json', config: BASE_CONFIG, background: 'white', ...spec }).spec);
}

async function svgOf({ vega }: Libs, runtime: unknown, values: unknown[] | null): Promise<string> {
  const view = new vega.View(runtime, { renderer: 'none' });
  try {
    if (values) view.data(VALUES, values);
    const svg = await view.toSVG();
    // the <svg> carries an xlink namespace and a fixed size; make it scale down in narrow pages
    return svg.replace('<svg ', '<svg role="img" style="max-width:100%;height:auto" ');
  } finally {
    view.finalize();
  }
}

export const TAXONOMY_COLORS: Record<string, string> = { T1: '#1a9850', T2: '#91cf60', T3: '#fee08b', T4: '#fc8d59', T5: '#d73027', none: '#bbbbbb' };
const PCT_SCALE = { domain: [0, 100] };

export interface BarDatum {
  label: string;
  value: number | null;
}

/** Horizontal bars, one per label (a leaderboard, or one rollout's backbones). */
export function barSpec(title: string, data: BarDatum[], opts: { axisTitle?: string; max?: number; color?: string } = {}): Spec {
  const values = data.map((d) => ({ label: d.label, value: d.value ?? 0, shown: d.value === null ? '–' : String(Math.round(d.value * 10) / 10) }));
  return {
    title,
    width: 520,
    height: { step: 22 },
    data: { values },
    encoding: {
      y: { field: 'label', type: 'nominal', sort: null, title: null, axis: { labelLimit: 260 } },
      x: { field: 'value', type: 'quantitative', title: opts.axisTitle ?? 'score (%)', scale: opts.max === undefined ? PCT_SCALE : { domain: [0, opts.max] } },
    },
    layer: [
      { mark: { type: 'bar', color: opts.color ?? '#4c78a8', tooltip: true } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 11 }, encoding: { text: { field: 'shown' } } },
    ],
  };
}

export interface GroupedDatum {
  group: string;
  series: string;
  value: number | null;
}

/** Vertical bars grouped by `group` (a backbone, a task), one bar per series (an agent/model). */
export function groupedBarSpec(title: string, data: GroupedDatum[], groupTitle: string, groupOrder?: string[]): Spec {
  const values = data.filter((d) => d.value !== null).map((d) => ({ ...d, value: Math.round((d.value as number) * 10) / 10 }));
  return {
    title,
    width: { step: 14 },
    height: 220,
    data: { values },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x: { field: 'group', type: 'nominal', title: groupTitle, sort: groupOrder ?? 'ascending', axis: { labelAngle: -30, labelLimit: 160 } },
      xOffset: { field: 'series', type: 'nominal' },
      y: { field: 'value', type: 'quantitative', title: 'score (%)', scale: PCT_SCALE },
      color: { field: 'series', type: 'nominal', title: 'agent / model', scale: { scheme: 'tableau10' } },
    },
  };
}

/** Heat map: rows (categories) × columns (agent/model), colour = score. */
export function heatmapSpec(title: string, data: { row: string; col: string; value: number | null }[], rowTitle: string): Spec {
  const values = data.map((d) => ({ ...d, value: d.value === null ? null : Math.round(d.value * 10) / 10, shown: d.value === null ? '–' : String(Math.round(d.value)) }));
  return {
    title,
    width: { step: 90 },
    height: { step: 20 },
    data: { values },
    encoding: {
      y: { field: 'row', type: 'nominal', title: rowTitle, axis: { labelLimit: 220 } },
      x: { field: 'col', type: 'nominal', title: null, axis: { orient: 'top', labelAngle: 0, labelLimit: 160 } },
    },
    layer: [
      { mark: { type: 'rect', tooltip: true }, encoding: { color: { field: 'value', type: 'quantitative', title: 'score (%)', scale: { domain: [0, 100], scheme: 'redyellowgreen' } } } },
      { mark: { type: 'text', fontSize: 11 }, encoding: { text: { field: 'shown' }, color: { condition: { test: 'datum.value !== null && (datum.value < 20 || datum.value > 80)', value: 'white' }, value: 'black' } } },
    ],
  };
}

/** Stacked horizontal bars: count of rollouts per taxonomy label, one bar per agent/model. */
export function taxonomySpec(title: string, data: { series: string; label: string; count: number }[]): Spec {
  const order = ['T1', 'T2', 'T3', 'T4', 'T5', 'none'];
  const present = order.filter((l) => data.some((d) => d.label === l && d.count > 0));
  return {
    title,
    width: 520,
    height: { step: 24 },
    data: { values: data.filter((d) => d.count > 0).map((d) => ({ ...d, order: order.indexOf(d.label) })) },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      y: { field: 'series', type: 'nominal', title: null, axis: { labelLimit: 260 } },
      x: { field: 'count', type: 'quantitative', title: 'rollouts', stack: 'zero' },
      color: { field: 'label', type: 'nominal', title: 'failure mode', scale: { domain: present, range: present.map((l) => TAXONOMY_COLORS[l]) } },
      order: { field: 'order', type: 'quantitative' },
    },
  };
}
