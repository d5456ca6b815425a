import { SaasbenchError } from '../errors';

/**
 * A `benchmark pull` failure: `what` names the thing that failed (a URL, a file, a flag), `why`
 * the cause. The CLI prints it as the single line `saasbench: <what>: <why>`; neither part ever
 * carries a credential (URLs are redacted, tokens never enter messages).
 */
export class PullError extends SaasbenchError {
  static override readonly nonRetryable = true;
  constructor(
    readonly what: string,
    readonly why: string,
  ) {
    super(`${what}: ${why}`.replace(/\s*\n\s*/g, ' '));
  }
}

/** `https://user:secret@host/x` → `https://***@host/x`, so a URL with credentials can be printed or stored. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/i, '$1***@');
}

export function humanSize(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
