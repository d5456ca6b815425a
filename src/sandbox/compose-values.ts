// Parsers for compose's scalar mini-languages (ports, durations, volume specs, sizes, commands).
// They throw plain `ValueError`s; the loader turns them into ComposeErrors with file + path.
import { SaasbenchError } from '../errors';

export class ValueError extends SaasbenchError {
  static override readonly nonRetryable = true;
  override name = 'ValueError';
}

export interface PortSpec {
  target: number;
  protocol: 'tcp' | 'udp';
}

function portNumber(s: string, what: string): number {
  if (!/^\d+$/.test(s)) throw new ValueError(`${what} "${s}" is not a port number (ranges are not supported)`);
  const n = Number(s);
  if (n < 1 || n > 65535) throw new ValueError(`${what} ${n} is out of range 1-65535`);
  return n;
}

/**
 * Short port syntax: "8080", "8080:80", "127.0.0.1:8080:80", "[::1]:8080:80", "80/udp", or a number.
 * Only the container side matters: the host side is always a random loopback port.
 */
export function parsePort(value: string | number): PortSpec {
  if (typeof value === 'number') return { target: portNumber(String(value), 'port'), protocol: 'tcp' };
  let s = value.trim();
  let protocol: PortSpec['protocol'] = 'tcp';
  const slash = s.lastIndexOf('/');
  if (slash >= 0) {
    const p = s.slice(slash + 1).toLowerCase();
    if (p !== 'tcp' && p !== 'udp') throw new ValueError(`protocol "${p}" is not supported (tcp or udp)`);
    protocol = p;
    s = s.slice(0, slash);
  }
  // The container port is always the last colon-separated field; IPv6 hosts are bracketed.
  const colon = s.lastIndexOf(':');
  const target = colon >= 0 ? s.slice(colon + 1) : s;
  return { target: portNumber(target, 'container port'), protocol };
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go-style duration ("5s", "1m30s", "1.5s", "100ms") to nanoseconds, as the Docker API wants. */
export function parseDuration(value: string): number {
  const s = value.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) throw new ValueError(`"${value}" is not a duration (examples: "5s", "1m30s", "500ms")`);
    total += Number(m[1]) * DURATION_UNITS[m[2]];
    pos = re.lastIndex;
  }
  if (s.length === 0) throw new ValueError('empty duration');
  return Math.round(total);
}

export type VolumeMount =
  | { type: 'volume'; source: string; target: string; readOnly: boolean }
  | { type: 'bind'; source: string; target: string; readOnly: boolean }
  | { type: 'anonymous'; target: string };

const ACCEPTED_MODES = new Set(['ro', 'rw', 'cached', 'delegated', 'consistent', 'z', 'Z', 'nocopy']);

/** Short volume syntax. Bind sources stay as written here; the loader resolves them. */
export function parseVolumeShort(value: string): VolumeMount {
  const parts = value.split(':');
  if (parts.length === 1) {
    if (!parts[0].startsWith('/')) throw new ValueError(`"${value}": a volume target must be an absolute path`);
    return { type: 'anonymous', target: parts[0] };
  }
  if (parts.length > 3) throw new ValueError(`"${value}" is not "source:target[:mode]"`);
  const [source, target, mode = 'rw'] = parts;
  if (!target.startsWith('/')) throw new ValueError(`"${value}": target "${target}" must be an absolute path`);
  const modes = mode.split(',');
  for (const m of modes) {
    if (!ACCEPTED_MODES.has(m)) throw new ValueError(`"${value}": mode "${m}" is not supported (ro or rw)`);
  }
  const readOnly = modes.includes('ro');
  if (source === '') throw new ValueError(`"${value}": empty source`);
  if (isBindSource(source)) return { type: 'bind', source, target, readOnly };
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(source)) throw new ValueError(`"${value}": "${source}" is not a volume name`);
  return { type: 'volume', source, target, readOnly };
}

export function isBindSource(source: string): boolean {
  return source.startsWith('.') || source.startsWith('/') || source.startsWith('~');
}

/** Byte sizes as compose writes them: 1024, "64m", "1gb", "512k". */
export function parseByteSize(value: string | number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i.exec(value.trim());
  if (!m) throw new ValueError(`"${value}" is not a size (examples: "64m", "1gb", 1048576)`);
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.round(Number(m[1]) * mult);
}

/** Splits a string command like a POSIX shell would (quotes, backslashes), as compose does. */
export function shellSplit(value: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < value.length && '"\\$`'.includes(value[i + 1])) cur += value[++i];
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < value.length) {
      cur += value[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new ValueError(`unterminated quote in ${JSON.stringify(value)}`);
  if (inWord) out.push(cur);
  return out;
}
