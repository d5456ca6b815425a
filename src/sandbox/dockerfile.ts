// What a Dockerfile builds FROM, and the same Dockerfile with its base images mapped (image-map.ts).
// Only the parts that decide base images are parsed: global ARGs, FROM lines, line continuations.
import { mapImage, type ImageMap } from './image-map';

export interface BaseImage {
  /** 1-based line of the FROM instruction */
  line: number;
  /** the image as written (may hold `${ARG}`) */
  written: string;
  /** after ARG substitution (what Docker would pull) */
  resolved: string;
  /** set when the FROM is exactly `${NAME}` / `$NAME`: the build arg that decides the base */
  arg?: string;
}

interface Instruction {
  line: number;
  keyword: string;
  rest: string;
}

/** Instructions with continuation lines joined; comments and parser directives dropped. */
function instructions(text: string): Instruction[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: Instruction[] = [];
  let cur: Instruction | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (cur === null) {
      const t = l.trim();
      if (t === '' || t.startsWith('#')) continue;
      const m = /^(\S+)\s*(.*)$/.exec(t)!;
      cur = { line: i + 1, keyword: m[1].toUpperCase(), rest: m[2] };
    } else if (!l.trim().startsWith('#')) cur.rest += ` ${l.trim()}`;
    if (cur.rest.endsWith('\\')) cur.rest = cur.rest.slice(0, -1).trimEnd();
    else {
      out.push(cur);
      cur = null;
    }
  }
  if (cur) out.push(cur);
  return out;
}

/** `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME:+alt}` as the Dockerfile frontend expands them. */
function substitute(s: string, vars: Record<string, string | undefined>): string {
  return s.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\+|-|\+)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_m, braced, op, word, bare) => {
    const v = vars[braced ?? bare];
    if (op === ':-') return v ? v : word;
    if (op === '-') return v !== undefined ? v : word;
    if (op === ':+') return v ? word : '';
    if (op === '+') return v !== undefined ? word : '';
    return v ?? '';
  });
}

/**
 * The base images of a Dockerfile given the build args, in order. Stages built earlier in the same
 * file (`FROM builder`) and `scratch` are not images and are left out.
 */
export function baseImages(text: string, buildArgs: Record<string, string>): BaseImage[] {
  const globals: Record<string, string | undefined> = {};
  const stages = new Set<string>();
  const out: BaseImage[] = [];
  let seenFrom = false;
  for (const ins of instructions(text)) {
    if (ins.keyword === 'ARG' && !seenFrom) {
      // ARG NAME[=default] (several per line are allowed)
      for (const m of ins.rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)(?:=("[^"]*"|'[^']*'|\S*))?/g)) {
        const def = m[2] === undefined ? undefined : m[2].replace(/^(["'])(.*)\1$/, '$2');
        globals[m[1]] = m[1] in buildArgs ? buildArgs[m[1]] : def;
      }
    }
    if (ins.keyword !== 'FROM') continue;
    seenFrom = true;
    const words = ins.rest.split(/\s+/).filter((w) => w !== '' && !w.startsWith('--'));
    const written = words[0] ?? '';
    const as = words[1]?.toUpperCase() === 'AS' ? words[2] : undefined;
    const resolved = substitute(written, globals);
    const earlierStage = stages.has(resolved.toLowerCase());
    if (as) stages.add(as.toLowerCase());
    if (resolved === 'scratch' || earlierStage) continue;
    const argOnly = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(written);
    out.push({ line: ins.line, written, resolved, ...(argOnly ? { arg: argOnly[1] } : {}) });
  }
  return out;
}

export interface MappedDockerfile {
  /** the Dockerfile text to build (unchanged when only build args changed) */
  text: string;
  /** build args, with the ARG that decides a mapped base set to the mapped image */
  args: Record<string, string>;
  /** what was rewritten, for the log and `tasks check` */
  mapped: { line: number; from: string; to: string; via: 'arg' | 'text' }[];
}

/**
 * Apply an image map to a Dockerfile's bases: a FROM that is exactly one ARG gets that build arg
 * set (the Dockerfile stays as written); any other FROM has its image rewritten in the text.
 */
export function mapDockerfile(text: string, buildArgs: Record<string, string>, map: ImageMap | undefined): MappedDockerfile {
  const args = { ...buildArgs };
  const mapped: MappedDockerfile['mapped'] = [];
  const lines = text.split('\n');
  for (const b of baseImages(text, buildArgs)) {
    const to = mapImage(b.resolved, map);
    if (!to) continue;
    if (b.arg) {
      args[b.arg] = to;
      mapped.push({ line: b.line, from: b.resolved, to, via: 'arg' });
    } else {
      const i = b.line - 1;
      // the FROM keyword, optional --flags, then the image: replace that one token
      lines[i] = lines[i].replace(/^(\s*FROM\s+(?:--\S+\s+)*)(\S+)/i, (_m, head: string) => `${head}${to}`);
      mapped.push({ line: b.line, from: b.resolved, to, via: 'text' });
    }
  }
  return { text: mapped.some((m) => m.via === 'text') ? lines.join('\n') : text, args, mapped };
}
