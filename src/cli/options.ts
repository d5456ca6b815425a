import { InvalidArgumentError } from 'commander';

/** Parsers for numeric flags: a bad value names the flag and what was expected. */
export function intFlag(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer between ${min} and ${max}, got "${v}"`);
    return n;
  };
}

export function positiveFlag(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number, got "${v}"`);
    return n;
  };
}

/**
 * Commander's own errors in the form every other input error takes — `command line: <flag>: <problem>`
 * — on one line (bad-input corpus, docs/security.md). Anything unrecognised passes through.
 */
export function formatCommanderError(s: string): string {
  const text = s.replace(/^error:\s*/, '').trim();
  const rules: [RegExp, (m: RegExpExecArray) => string][] = [
    [/^option '(-[^' ]+)[^']*' argument '([^']*)' is invalid\.\s*(.*)$/s, (m) => `${m[1]}: ${m[3].replace(new RegExp(`^${m[1]}\\s+`), '') || `invalid value "${m[2]}"`}`],
    [/^required option '(-[^' ]+)[^']*' not specified$/, (m) => `${m[1]}: required`],
    [/^option '(-[^' ]+)[^']*' argument missing$/, (m) => `${m[1]}: needs a value`],
    [/^unknown option '([^']+)'(.*)$/s, (m) => `${m[1]}: unknown option${m[2].trim() ? ` ${m[2].trim()}` : ''}`],
    [/^too many arguments(.*)$/s, (m) => `arguments: too many${m[1].trim() ? ` ${m[1].trim()}` : ''}`],
    [/^missing required argument '([^']+)'$/, (m) => `<${m[1]}>: missing required argument`],
    [/^unknown command '([^']+)'(.*)$/s, (m) => `${m[1]}: unknown command${m[2].trim() ? ` ${m[2].trim()}` : ''}`],
  ];
  for (const [re, f] of rules) {
    const m = re.exec(text);
    if (m) return `command line: ${f(m).replace(/\s*\n\s*/g, ' ')}\n`;
  }
  return `${text}\n`;
}
