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
