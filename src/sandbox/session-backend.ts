import { shQuote } from '../shell';
import type { SandboxBackend } from './backend';
import type { ExecOptions } from './exec';
import { isSessionClosed, type ExecSession, type SessionResult } from './exec-session';

/**
 * The agent phase's view of the sandbox: its detached launches keep their exec open
 * (exec-session.ts), and its later plain execs into the same container (probes, the final
 * capture) go through that channel: a write and a read instead of a Docker exec each
 * (bench/sweep-overhead.ts). Execs with their own user, directory, environment or stdin, and
 * everything after the channel is gone (the agent killed its shell, another worker took over),
 * take the ordinary path. close() ends every channel; nothing of it outlives the activity.
 */
export function sessionBackend(base: SandboxBackend): SandboxBackend & { close(): void } {
  const sessions = new Map<string, ExecSession>();
  const via = (container: string, opts: ExecOptions = {}): ExecSession | undefined => {
    const s = sessions.get(container);
    if (!s?.open || opts.user || opts.workdir || opts.env || opts.stdin !== undefined) return undefined;
    return s;
  };
  const attempt = async <T>(container: string, cmd: string[], opts: ExecOptions | undefined, through: (r: SessionResult) => T, plain: () => Promise<T>): Promise<T> => {
    const s = via(container, opts);
    if (!s) return plain();
    try {
      return through(await s.run(cmd.map(shQuote).join(' '), opts?.timeoutMs ?? 0));
    } catch (err) {
      if (!isSessionClosed(err)) throw err;
      sessions.delete(container);
      return plain();
    }
  };
  const own: Pick<SandboxBackend, 'execDetached' | 'exec' | 'execBytes'> & { close(): void } = {
    async execDetached(container, script, opts) {
      const d = await base.execDetached(container, script, { ...opts, session: true });
      sessions.get(container)?.close();
      if (d.session) sessions.set(container, d.session);
      return d;
    },
    exec(container, cmd, opts) {
      const max = opts?.maxOutputBytes ?? 32 * 1024 * 1024;
      const text = (b: Buffer) => b.subarray(0, max).toString('utf8') + (b.length > max ? '\n[saasbench: output truncated]\n' : '');
      return attempt(container, cmd, opts, (r) => ({ exitCode: r.exitCode, stdout: text(r.stdout), stderr: text(r.stderr), timedOut: r.timedOut }), () => base.exec(container, cmd, opts));
    },
    execBytes(container, cmd, opts) {
      return attempt(container, cmd, opts, (r) => ({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr.toString('utf8'), timedOut: r.timedOut }), () => base.execBytes(container, cmd, opts));
    },
    close() {
      for (const s of sessions.values()) s.close();
      sessions.clear();
    },
  };
  // everything else is the base backend's own (bound to it: a class-based backend keeps its state)
  return new Proxy(base, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(own, prop)) return own[prop as keyof typeof own];
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as SandboxBackend & { close(): void };
}
