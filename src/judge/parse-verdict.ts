/**
 * Read a judge reply as {score, reasoning}. Judges are asked for bare JSON, but real models wrap
 * it in fences or prose; these fallbacks are tried in order, most specific first.
 */
export function parseVerdict(text: string): { score: number; reasoning: string } | null {
  const unfenced = text.replace(/```(?:json)?\s*([\s\S]*?)```/gi, '$1').trim();
  for (const candidate of [unfenced, ...balancedObjects(unfenced)]) {
    try {
      const v = JSON.parse(candidate) as unknown;
      if (typeof v === 'number' && Number.isFinite(v)) return { score: v, reasoning: '' };
      if (v && typeof v === 'object' && 'score' in v) {
        const score = Number((v as { score: unknown }).score);
        if (Number.isFinite(score)) return { score, reasoning: String((v as { reasoning?: unknown; reason?: unknown }).reasoning ?? (v as { reason?: unknown }).reason ?? '') };
      }
    } catch {
      // not JSON: try the next form
    }
  }
  const keyed = /"?score"?\s*[:=]\s*(-?\d+(?:\.\d+)?)/i.exec(unfenced) ?? /\bscore\b[^0-9-]{0,12}(-?\d+(?:\.\d+)?)/i.exec(unfenced);
  if (keyed) return { score: Number(keyed[1]), reasoning: unfenced.slice(0, 500) };
  const outOf = /(-?\d+(?:\.\d+)?)\s*(?:\/|out of)\s*\d+/i.exec(unfenced);
  if (outOf) return { score: Number(outOf[1]), reasoning: unfenced.slice(0, 500) };
  return null;
}

function balancedObjects(s: string): string[] {
  const out: string[] = [];
  for (let i = s.indexOf('{'); i >= 0; i = s.indexOf('{', i + 1)) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      if (s[j] === '{') depth++;
      else if (s[j] === '}' && --depth === 0) {
        out.push(s.slice(i, j + 1));
        break;
      }
    }
  }
  return out;
}
