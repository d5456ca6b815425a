import { closeHostPort, openHostPort } from '../security/firewall';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { Client } from 'pg';
import { docker, exec, readFile } from '../sandbox';
import { rolesPort } from './auth/provider';
import { manifestExtras, PUBLISHED_NO_ROLES } from './auth/task-roles';
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
  const baseUrl = appUrlOf(task, stack);
  const execIn = async (service: string, command: string, opts?: { timeoutMs?: number; workdir?: string }) =>
    exec(container(service), ['bash', '-c', command], { timeoutMs: opts?.timeoutMs, workdir: opts?.workdir ?? task.environment.workspace });
  const extras = manifestExtras(task);
  const declared = extras.roles;
  // undeclared roles fail naming why; inline P13 logins work either way
  const undeclaredHint =
    task.layout === 'published' ? PUBLISHED_NO_ROLES : Object.keys(declared).length ? undefined : 'this task declares no roles (task.yaml `roles:`; see docs/primitives.md#roles)';
  const roles = rolesPort(declared, { baseUrl, appService: task.environment.appService, exec: execIn, cacheKey: stack.project, undeclaredHint });
  return {
    baseUrl,
    workspace: task.environment.workspace,
    appService: task.environment.appService,
    services: Object.keys(stack.services),
    artifactsDir,
    log,
    taskDir: task.dir,
    roles,
    compat: { publishedIdCapture: extras.publishedIdCapture },
    // webhooks: the app container reaches this host at its network's gateway address
    // (the rollout firewall lets the containers reach that port only while the receiver listens)
    webhookReceiver: async () => {
      const gw = await gatewayOf(stack.network);
      return {
        ...gw,
        open: async (port: number) => {
          await openHostPort(stack.project, gw.bindHost, port);
          return () => closeHostPort(stack.project, gw.bindHost, port);
        },
      };
    },
    exec: execIn,
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

const gateways = new Map<string, Promise<{ bindHost: string; urlHost: string }>>();

/** The host side of a stack's bridge network: where P27's receiver listens and what the app calls. */
function gatewayOf(network: string): Promise<{ bindHost: string; urlHost: string }> {
  let p = gateways.get(network);
  if (!p) {
    p = docker()
      .getNetwork(network)
      .inspect()
      .then((info: { IPAM?: { Config?: { Gateway?: string }[] } }) => {
        const gw = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
        if (!gw) throw new InfraError(`network ${network} has no gateway address`);
        return { bindHost: gw, urlHost: gw };
      });
    p.catch(() => gateways.delete(network));
    gateways.set(network, p);
  }
  return p;
}
