import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { Client } from 'pg';
import { exec, readFile } from '../sandbox';
import type { Task } from '../tasks/task';
import type { StackRef } from '../workflows/contracts';
import type { PrimitiveEnv, SqlResult } from './types';
import { InfraError } from '../errors';

export function servicePort(stack: StackRef, service: string, port: number): number {
  const s = stack.services[service];
  const hostPort = s?.ports[`${port}/tcp`];
  if (!hostPort) throw new InfraError(`service ${service} publishes no port ${port} in stack ${stack.project}`);
  return hostPort;
}

export function appUrlOf(task: Task, stack: StackRef): string {
  return `http://127.0.0.1:${servicePort(stack, task.environment.appService, task.environment.appPort)}`;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The production PrimitiveEnv: the rollout's stack reached through Docker and loopback ports. */
export function envFromStack(task: Task, stack: StackRef, artifactsDir: string, log: Logger): PrimitiveEnv {
  const container = (service: string) => {
    const s = stack.services[service];
    if (!s) throw new InfraError(`no service "${service}" in stack ${stack.project} (services: ${Object.keys(stack.services).join(', ')})`);
    return s.container;
  };
  const app = container(task.environment.appService);
  const db = task.environment.database;
  mkdirSync(artifactsDir, { recursive: true });
  return {
    baseUrl: appUrlOf(task, stack),
    workspace: task.environment.workspace,
    appService: task.environment.appService,
    services: Object.keys(stack.services),
    artifactsDir,
    log,
    async exec(service, command, opts) {
      return exec(container(service), ['bash', '-c', command], { timeoutMs: opts?.timeoutMs, workdir: opts?.workdir ?? task.environment.workspace });
    },
    readFile: (path, maxBytes) => readFile(app, path, { maxBytes }),
    async statPath(path) {
      const r = await exec(app, ['bash', '-c', `if [ -d ${q(path)} ]; then echo dir; elif [ -e ${q(path)} ]; then echo file; fi`]);
      const kind = r.stdout.trim();
      return kind === 'dir' || kind === 'file' ? kind : null;
    },
    async listTree(dir) {
      const r = await exec(app, ['bash', '-c', `[ -d ${q(dir)} ] || exit 3; cd ${q(dir)} && find . -mindepth 1 \\( -name node_modules -o -name .git \\) -prune -o -printf '%P\\t%y\\n'`]);
      if (r.exitCode === 3) return null;
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [p, t] = l.split('\t');
          return t === 'd' ? `${p}/` : p;
        });
    },
    sql: db
      ? async (text: string): Promise<SqlResult> => {
          const client = new Client({ host: '127.0.0.1', port: servicePort(stack, db.service, db.port), user: db.user, password: db.password, database: db.name, connectionTimeoutMillis: 10_000, statement_timeout: 60_000 });
          await client.connect();
          try {
            const r = await client.query(text);
            const last = Array.isArray(r) ? r[r.length - 1] : r;
            return { rows: last.rows ?? [], columns: (last.fields ?? []).map((f: { name: string }) => f.name) };
          } finally {
            await client.end().catch(() => undefined);
          }
        }
      : undefined,
  };
}
