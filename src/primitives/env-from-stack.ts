import { shQuote } from '../shell';
import { closeHostPort, openHostPort } from '../sandbox/firewall';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { SandboxBackend } from '../sandbox/backend';
import { sandboxBackend } from '../sandbox/factory';
import { rolesPort } from './auth/provider';
import { taskSetupPort } from './task-setup';
import { manifestExtras, PUBLISHED_NO_ROLES } from './auth/task-roles';
import type { Task } from '../model/task';
import type { StackHandle } from '../model/sandbox';
import { databasePort } from './db-drivers';
import type { PrimitiveEnv } from './types';
import { InfraError } from '../errors';
import { publishedHostPorts } from './host-ports';

/** The app's base URL as this process reaches it (the backend knows which host publishes it). */
export function appUrlOf(task: Task, stack: StackHandle, sandbox: SandboxBackend = sandboxBackend()): string {
  return sandbox.endpoint(stack, task.environment.appService, task.environment.appPort).url;
}

const q = shQuote;

/** The production PrimitiveEnv: the rollout's stack reached through the sandbox backend and its published ports. */
export function envFromStack(task: Task, stack: StackHandle, artifactsDir: string, log: Logger, sandbox: SandboxBackend = sandboxBackend()): PrimitiveEnv {
  const container = (service: string) => {
    const s = stack.services[service];
    if (!s) throw new InfraError(`no service "${service}" in stack ${stack.project} (services: ${Object.keys(stack.services).join(', ')})`);
    return s.container;
  };
  const app = container(task.environment.appService);
  const db = task.environment.database;
  const dbs = db || task.environment.databases ? databasePort(db, task.environment.databases, (t) => sandbox.endpoint(stack, t.service, t.port)) : undefined;
  mkdirSync(artifactsDir, { recursive: true });
  const baseUrl = appUrlOf(task, stack, sandbox);
  const execIn = async (service: string, command: string, opts?: { timeoutMs?: number; workdir?: string }) =>
    sandbox.exec(container(service), ['bash', '-c', command], { timeoutMs: opts?.timeoutMs, workdir: opts?.workdir ?? task.environment.workspace });
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
        return m && stack.services[m.service]?.ports[`${m.target}/tcp`] ? sandbox.endpoint(stack, m.service, m.target).url : undefined;
      };
    })(),
    // webhooks: the app container reaches this host at its network's gateway address
    // (the rollout firewall lets the containers reach that port only while the receiver listens)
    webhookReceiver: async () => {
      const host = await sandbox.gateway(stack.network, app);
      const gw = { bindHost: host, urlHost: host };
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
      return sandbox.logs(container(service), tail);
    },
    readFile: (path, maxBytes) => sandbox.readFile(app, path, { maxBytes }),
    async statPath(path) {
      const r = await sandbox.exec(app, ['bash', '-c', `if [ -d ${q(path)} ]; then echo dir; elif [ -e ${q(path)} ]; then echo file; fi`]);
      const kind = r.stdout.trim();
      return kind === 'dir' || kind === 'file' ? kind : null;
    },
    async listTree(dir) {
      const r = await sandbox.exec(app, ['bash', '-c', `[ -d ${q(dir)} ] || exit 3; cd ${q(dir)} && find . -mindepth 1 \\( -name node_modules -o -name .git \\) -prune -o -printf '%P\\t%y\\n'`]);
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
