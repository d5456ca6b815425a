/**
 * Read a judge reply as {score, reasoning}. Judges are asked for bare JSON, but real models wrap
 * it in fences or prose; these fallbacks are tried in order, most specific first:
 *  1. the reply (code fences stripped) is a JSON object with a numeric `score` (or a bare number);
 *  2. a balanced `{…}` inside the reply is such an object;
 *  3. `"score": N` / `score = N` / `Score: N` / `score of N`;
 *  4. `N/M` or `N out of M`;
 *  5. a last line that is only a number (optionally **bold** or `code`).
 * `strict` keeps only 1–2. Anything else is unparseable (null) — no "first number anywhere".
 */
export function parseVerdict(text: string, opts: { strict?: boolean } = {}): { score: number; reasoning: string } | null {
  const unfenced = text.replace(/```(?:json|JSON)?\s*([\s\S]*?)```/g, '$1').trim();
  for (const candidate of [unfenced, ...balancedObjects(unfenced)]) {
    const v = tryJson(candidate);
    if (v === undefined) continue;
    if (typeof v === 'number' && Number.isFinite(v)) return { score: v, reasoning: '' };
    if (v && typeof v === 'object' && !Array.isArray(v) && 'score' in v) {
      const o = v as { score: unknown; reasoning?: unknown; reason?: unknown };
      const score = typeof o.score === 'number' ? o.score : typeof o.score === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(o.score) ? Number(o.score) : NaN;
      if (Number.isFinite(score)) return { score, reasoning: String(o.reasoning ?? o.reason ?? '').slice(0, 2000) };
    }
  }
  if (opts.strict) return null;
  const prose = unfenced.slice(0, 2000);
  const keyed = /"?\bscore\b"?\s*(?:[:=]|is|of)\s*\**\s*(-?\d+(?:\.\d+)?)/i.exec(unfenced);
  if (keyed) return { score: Number(keyed[1]), reasoning: prose };
  const outOf = /(-?\d+(?:\.\d+)?)\s*(?:\/|out of)\s*\d+(?:\.\d+)?/i.exec(unfenced);
  if (outOf) return { score: Number(outOf[1]), reasoning: prose };
  const lastLine = unfenced.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).pop() ?? '';
  const bare = /^[*`_\s]*(-?\d+(?:\.\d+)?)[*`_.\s]*$/.exec(lastLine);
  if (bare) return { score: Number(bare[1]), reasoning: prose };
  return null;
}

function tryJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    // raw newlines/tabs inside strings are a common model mistake
    try {
      return JSON.parse(escapeControlsInStrings(s));
    } catch {
      return undefined;
    }
  }
}

function escapeControlsInStrings(s: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inStr && c === '\\') {
      out += c + (s[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') inStr = !inStr;
    if (inStr && c === '\n') out += '\\n';
    else if (inStr && c === '\r') out += '\\r';
    else if (inStr && c === '\t') out += '\\t';
    else out += c;
  }
  return out;
}

function balancedObjects(s: string): string[] {
  const out: string[] = [];
  for (let i = s.indexOf('{'); i >= 0; i = s.indexOf('{', i + 1)) {
    let depth = 0;
    let inStr = false;
    for (let j = i; j < s.length; j++) {
      const c = s[j];
      if (inStr) {
        if (c === '\\') j++;
        else if (c === '"') inStr = false;
        continue;
      }
      if (c === '"') inStr = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        out.push(s.slice(i, j + 1));
        break;
      }
    }
  }
  return out;
}
