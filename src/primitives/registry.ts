import { CATALOGUE } from './catalogue';
import { p17LlmJudge } from './p17-llm-judge';
import type { Primitive } from './types';

/**
 * Types that appear in published SaaSBench DAGs. A type in this list that the catalogue lacks is
 * reported as "not yet supported" (counted, not crashed on); any other unknown type is an error.
 */
export const PUBLISHED_TYPES = [
  'P01', 'P02', 'P03', 'P04', 'P05', 'P06', 'P07', 'P08', 'P09', 'P10', 'P11', 'P12', 'P13', 'P14', 'P15',
  'P16', 'P17', 'P18', 'P19', 'P20', 'P21', 'P22', 'P23', 'P24', 'P25', 'P26', 'P27', 'P28', 'P29',
  'SCREENSHOT', 'RENDER_DOM',
];

const byKey = new Map<string, Primitive>();
const ALL: Primitive[] = [...CATALOGUE, p17LlmJudge as Primitive];
for (const p of ALL) {
  byKey.set(p.id.toUpperCase(), p);
  byKey.set(p.name.toUpperCase(), p);
}

export function findPrimitive(type: string): Primitive | undefined {
  return byKey.get(type.toUpperCase());
}

export function isKnownPublishedType(type: string): boolean {
  return PUBLISHED_TYPES.includes(type.toUpperCase());
}

export function catalogue(): readonly Primitive[] {
  return ALL;
}
