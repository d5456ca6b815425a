import mapping from './category_to_backbone.json';

export const BACKBONES = ['Deploy', 'Data', 'API', 'Logic', 'AuthZ', 'Quality'] as const;
export type Backbone = (typeof BACKBONES)[number];
export const UNMAPPED = 'Unmapped';

interface Rule {
  backbone: string;
  prefixes?: string[];
  suffixes?: string[];
}

const exact = mapping.exact as Record<string, string>;
const rules = mapping.rules as Rule[];

/** Exact names win (so BusinessLogic_2FA is AuthZ), then the rules in file order. */
export function backboneOf(category: string): Backbone | typeof UNMAPPED {
  const hit = exact[category];
  if (hit) return hit as Backbone;
  for (const r of rules) {
    if (r.prefixes?.some((p) => category.startsWith(p)) || r.suffixes?.some((s) => category.endsWith(s))) {
      return r.backbone as Backbone;
    }
  }
  return UNMAPPED;
}
