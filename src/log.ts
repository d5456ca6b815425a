import pino, { type Logger } from 'pino';

/** Values that must never reach a log line, whatever field they hide in. */
const secretValues = new Set<string>();

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 8) secretValues.add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const s of secretValues) out = out.split(s).join('[REDACTED]');
  return out;
}

const SECRET_KEYS = ['apiKey', 'api_key', 'authorization', 'Authorization', 'x-api-key', 'password', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY'];

// Logs go to stderr so a command's stdout stays its result (tables, JSON).
export const log: Logger = pino({
  level: process.env.SAASBENCH_LOG_LEVEL ?? 'info',
  base: { pid: process.pid },
  redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`]), censor: '[REDACTED]' },
  hooks: {
    streamWrite: (s) => redact(s),
  },
}, pino.destination(2));

export function rolloutLogger(rolloutKey: string, extra: Record<string, unknown> = {}): Logger {
  return log.child({ rollout: rolloutKey, ...extra });
}
