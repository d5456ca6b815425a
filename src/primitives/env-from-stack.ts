import { shQuote } from '../shell';
import { closeHostPort, openHostPort } from '../sandbox/firewall';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { docker, exec, readFile } from '../sandbox';
import { rolesPort } from './auth/provider';
import { taskSetupPort } from './task-setup';
import { manifestExtras, PUBLISHED_NO_ROLES } from './auth/task-roles';
import type { Task } from '../model/task';
import type { StackHandle } from '../model/sandbox';
import { databasePort } from './db-drivers';
import type { PrimitiveEnv } from './types';
import { InfraError } from '../errors';
import { publishedHostPorts } from './host-ports';

export function servicePort(stack: StackHandle, service: string, port: number): number {
  const s = stack.services[service];
  const hostPort = s?.ports[`${port}/tcp`];
  if (!hostPort) throw new InfraError(`service ${service} publishes no port ${port} in stack ${stack.project}`);
  return hostPort;
}

export function appUrlOf(task: Task, stack: StackHandle): string {
  return `http://127.0.0.1:${servicePort(stack, task.environment.appService, task.environment.appPort)}`;
}

const q = shQuote;

/** The production PrimitiveEnv: the rollout's stack reached through Docker and loopback ports. */
export function envFromStack(task: Task, stack: StackHandle, artifactsDir: string, log: Logger): PrimitiveEnv {
  const container = (service: string) => {
    const s = stack.services[service];
    if (!s) throw new InfraError(`no service "${service}" in stack ${stack.project} (services: ${Object.keys(stack.services).join(', ')})`);
    return s.container;
  };
  const app = container(task.environment.appService);
  const db = task.environment.database;
  const dbs = db || task.environment.databases ? databasePort(db, task.environment.databases, (t) => ({ host: '127.0.0.1', port: servicePort(stack, t.service, t.port) })) : undefined;
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
    ...(task.clock ? { runClock: task.clock } : {}),
    ...(task.setup?.length ? { taskSetup: taskSetupPort(task.setup, stack.project) } : {}),
    // published DAGs address other services by their compose host port (http://localhost:9201/…)
    hostPortUrl: (() => {
      let ports: ReturnType<typeof publishedHostPorts> | undefined;
      return (port: number) => {
        ports ??= publishedHostPorts(task.environment.composeFile, task.environment.envFileFallbacks ?? []);
        const m = ports.get(port);
        const hostPort = m && stack.services[m.service]?.ports[`${m.target}/tcp`];
        return hostPort ? `http://127.0.0.1:${hostPort}` : undefined;
      };
    })(),
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
    async containerOutput(service, tail) {
      const buf = (await docker().getContainer(container(service)).logs({ stdout: true, stderr: true, tail, follow: false })) as unknown as Buffer;
      return demux(buf);
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
    ...(dbs ? { sql: dbs.sql, dbKind: dbs.dbKind, mongo: dbs.mongo } : {}),
  };
}

/** docker logs of a non-TTY container are frames with 8-byte headers; TTY output is plain. */
function demux(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length && (buf[i] === 1 || buf[i] === 2) && buf[i + 1] === 0) {
    const len = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + len));
    i += 8 + len;
  }
  return i === 0 ? buf.toString('utf8') : Buffer.concat(parts).toString('utf8');
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
