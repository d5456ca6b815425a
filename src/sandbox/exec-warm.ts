// A Docker exec opened ahead of the agent's launch. Each exec costs ~0.07 s before its command
// runs (runc starts it: bench/sweep-overhead.ts); provision opens one into the app container as
// its last step, and it gets ready while Temporal hands the rollout on to runAgent. The launch
// (exec-detached.ts) takes it when this worker process opened one, else it opens its own.
import type { Duplex } from 'node:stream';
import { shQuote } from '../shell';
import { openExec } from './exec';

/** The waiting shell: it reads one NUL-terminated script on stdin and runs it in its own place. */
const BOOT = 'IFS= read -r -d "" boot || exit 0; eval "$boot"';

/** Unused this long (a sidecar agent, a launch on another worker), the shell is let go. */
const IDLE_MS = 120_000;

type Opened = Awaited<ReturnType<typeof openExec>>;
interface Warm {
  opened: Promise<Opened | null>;
  timer: NodeJS.Timeout;
}

const warm = new Map<string, Warm>();

/** Open a waiting exec into `container` (as the image's user) for a launch to come; never throws. */
export function prewarmExec(container: string): void {
  if (warm.has(container)) return;
  const opened = openExec(container, ['bash', '-c', BOOT], {}, true).then(
    (o) => {
      const gone = () => {
        if (warm.get(container)?.opened === opened) forget(container);
      };
      o.stream.once('end', gone);
      o.stream.once('close', gone);
      o.stream.on('error', gone);
      // a waiting shell never keeps a process alive (a CLI run that ends before any launch)
      socketOf(o.stream)?.unref();
      return o;
    },
    () => null,
  );
  warm.set(container, { opened, timer: setTimeout(() => release(container), IDLE_MS).unref() });
}

/**
 * The waiting exec for `container`, running `cmd` (argv) with `env` exported: what a fresh
 * `openExec(container, cmd, { env }, true)` would have given. null when there is none, it died,
 * or the environment cannot be written as shell exports.
 */
export async function takeWarmExec(container: string, cmd: string[], env: Record<string, string> = {}): Promise<Opened | null> {
  const w = warm.get(container);
  if (!w) return null;
  forget(container);
  const o = await w.opened;
  if (!o) return null;
  const names = Object.keys(env);
  if (!names.every((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) || !usable(o.stream)) {
    o.stream.end();
    return null;
  }
  socketOf(o.stream)?.ref();
  const exports = names.map((k) => `export ${k}=${shQuote(env[k])}`);
  o.stream.write(`${[...exports, `exec ${cmd.map(shQuote).join(' ')}`].join('\n')}\0`);
  return o;
}

function socketOf(s: Duplex): { ref(): void; unref(): void } | null {
  const x = s as Duplex & Partial<{ ref(): void; unref(): void }>;
  return typeof x.ref === 'function' && typeof x.unref === 'function' ? (x as { ref(): void; unref(): void }) : null;
}

function usable(s: Duplex): boolean {
  return !s.destroyed && s.writable && s.readable;
}

function forget(container: string): void {
  const w = warm.get(container);
  if (!w) return;
  clearTimeout(w.timer);
  warm.delete(container);
}

/** EOF on its stdin: the waiting shell's read fails and it exits. */
function release(container: string): void {
  const w = warm.get(container);
  forget(container);
  void w?.opened.then((o) => o?.stream.end());
}
