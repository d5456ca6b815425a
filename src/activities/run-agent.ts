import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { createAgent } from '../agents/factory';
import { auditTranscript, type SandboxFacts } from '../agents/integrity';
import { startRelay, type Relay } from '../agents/llm-relay';
import { checkAgentModel, resolveModel, upstreamOf, type ResolvedModel } from '../agents/models';
import { gatewayRecord } from '../agents/metering';
import { superviseAgent, type SupervisionState } from '../agents/supervisor';
import { toAtif } from '../agents/trajectory/atif';
import { readAttempts } from '../agents/trajectory/files';
import { summarize } from '../agents/trajectory/types';
import type { AgentContext, AgentDriver } from '../agents/types';
import { rolloutLogger } from '../log';
import { writeJson } from '../runs/files';
import type { Task } from '../model/task';
import type { AgentRunSummary, RolloutInput, RolloutRef } from '../model/rollout';
import { taskFor } from './task-cache';
import { workspaceSeed } from './prepare-workspace';
import { networkInterfaces } from 'node:os';
import { sandboxBackend } from '../sandbox/factory';
import { sessionBackend } from '../sandbox/session-backend';
import { openAgentNetwork, type AgentNetwork } from '../security/agent-network';
import { readEgressLog } from '../security/egress-proxy';
import { limitSignals } from '../security/signals';
import { agentSnapshots, restoreInto } from '../snapshots/agent-snapshots';
import { captureDatabase, captureForRescore, keepDatabaseDump, keepForRescore, rescoreArchives } from '../snapshots/rescore-capture';
import { dumpName } from '../snapshots/db-dump';
import { loadSnapshot, type RestoreRequest } from '../snapshots/restore-request';
import { assertStackPresent } from '../snapshots/host-check';
import { governorLimits } from '../governor/limits';
import { providerGovernor } from '../governor/client';
import { governorGate, type Gate } from '../governor/gate';

export interface RunAgentInput {
  ref: RolloutRef;
  agent: string;
  model: string;
  budgetSeconds: number;
  idleSeconds: number;
  retry: RolloutInput['agentRetry'];
  /** seconds between rollout snapshots during the agent phase (0: only the final one); unset: none at all */
  snapshotSeconds?: number;
  /** start from a stored snapshot (a host move resumes its session; a fork restores the workspace only) */
  restore?: RestoreRequest;
}

/** Start (or re-attach to) the agent and supervise it with heartbeats until it is done. */
export async function runAgent(i: RunAgentInput): Promise<AgentRunSummary> {
  const actx = Context.current();
  const task = taskFor(i.ref.taskDir, i.ref.taskHash);
  const driver = createAgent(i.agent);
  const log = rolloutLogger(i.ref.rolloutKey, { activity: 'runAgent', agent: i.agent, attempt: actx.info.attempt });
  const resumeFrom = actx.info.heartbeatDetails as SupervisionState | undefined;
  // the launch exec stays open for this activity's later execs (probes, the final capture)
  const sandbox = sessionBackend(sandboxBackend());
  const ctx: AgentContext = {
    rolloutKey: i.ref.rolloutKey,
    sandbox,
    task,
    stack: i.ref.stack,
    container: i.ref.stack.services[task.environment.appService].container,
    workspace: task.environment.workspace,
    model: i.model,
    runDir: i.ref.runDir,
    prompt: readFileSync(join(i.ref.runDir, 'prompt.md'), 'utf8'),
    log,
  };
  // The stack vanished under a live worker (engine restarted, containers removed): the workflow moves
  // the rollout. An agent in the app container fails at once without it (launch, probe), so the
  // check (a Docker exec, ~0.1–0.25 s on a loaded host: bench/sweep-overhead.ts) is made only when
  // something failed; a sidecar agent would run on without the app container, so it checks first.
  if (driver.processContainer) await assertStackPresent(ctx.sandbox, ctx.container, ctx.rolloutKey);
  try {
    return await agentPhase(i, actx, ctx, driver, task, resumeFrom);
  } catch (err) {
    await assertStackPresent(ctx.sandbox, ctx.container, ctx.rolloutKey);
    throw err;
  } finally {
    sandbox.close();
  }
}

async function agentPhase(i: RunAgentInput, actx: Context, ctx: AgentContext, driver: AgentDriver, task: Task, resumeFrom: SupervisionState | undefined): Promise<AgentRunSummary> {
  const log = ctx.log;
  if (!resumeFrom && driver.preinstall) await withBeats(actx, () => driver.preinstall!());
  const gate = gateFor(driver, i);
  const started = await startRelayFor(driver, ctx, i, gate, !!resumeFrom);
  const relay = started?.relay ?? null;
  // the agent's way out: relay + egress proxy ports opened in the rollout firewall for the agent phase only
  const net = await openNetworkFor(driver, ctx, relay).catch(async (err: Error) => {
    await relay?.close();
    throw err;
  });
  try {
    // host-side agents run in their own sidecar container: the supervisor watches that one
    const where = driver.processContainer ? { ...ctx, container: driver.processContainer(ctx) } : ctx;
    // a restore happens once: a retried attempt that heartbeated has the restored stack already
    const restored = i.restore && !resumeFrom ? await loadSnapshot(i.restore) : null;
    if (restored) await restoreInto(ctx, i.restore!.session ? driver : null, where.container, restored);
    // a fresh workspace gets the PRD and the knowledge base: with the launch's own exec when the
    // agent runs in the app container, else written there first (a sidecar agent)
    const seedFiles = !restored && !resumeFrom ? workspaceSeed(task) : [];
    const seed = seedFiles.length ? { dir: ctx.workspace, files: seedFiles } : undefined;
    if (seed && driver.processContainer) await ctx.sandbox.writeFiles(ctx.container, seed.dir, seed.files);
    let lastState: SupervisionState | undefined = resumeFrom;
    const snaps = i.snapshotSeconds === undefined ? null : agentSnapshots(ctx, driver, where.container, { everySeconds: i.snapshotSeconds, beat: () => actx.heartbeat(lastState), log });
    const run = await superviseAgent(driver, where, {
      budgetSeconds: i.budgetSeconds,
      idleSeconds: i.idleSeconds,
      transientRetries: i.retry.transientRetries,
      transientBackoffSeconds: i.retry.backoffSeconds,
      onLostProcess: i.retry.onLostProcess,
      resumeFrom,
      restoredFrom: restored && i.restore!.session ? restored.supervision : undefined,
      seed: driver.processContainer ? undefined : seed,
      onPoll: snaps ? (s) => snaps.onPoll(s) : undefined,
      unbilledMs: gate ? () => gate.unbilledMs() : undefined,
      heartbeat: (s) => actx.heartbeat((lastState = s)),
      sleep: (ms) => actx.sleep(ms),
    });
    actx.heartbeat();
    await finalCapture(ctx, i, snaps, lastState && { ...lastState, priorAgentMs: run.agentSeconds * 1000, attemptStartedAt: 0, history: run.history });
    if (snaps) run.snapshots = snaps.taken;
    const governed = gate ? { ...run, governor: { waits: gate.stats.waited, waitSeconds: Math.round(gate.stats.waitMs / 100) / 10 } } : run;
    const done = await finishRun(driver, ctx, task, governed, net);
    // tokens, cost and settings as the gateway saw them (the agent is done: the counts are final)
    return started ? { ...done, gateway: gatewayRecord(started.relay.stats, started.model) } : done;
  } finally {
    await net?.close();
    if (started) {
      writeJson(join(ctx.runDir, 'agent', 'relay-stats.json'), { ...started.relay.stats, cost: gatewayRecord(started.relay.stats, started.model) });
      await started.relay.close();
    }
  }
}

/**
 * The agent is done: the rollout's final snapshot and the run folder's re-scoring archives, in ONE
 * exec of the app container (plus one per database), before evaluation writes anything. Each
 * Docker round trip is ~0.07 s (bench/sweep-overhead.ts). Failures are logged, not fatal.
 */
async function finalCapture(ctx: AgentContext, i: RunAgentInput, snaps: ReturnType<typeof agentSnapshots> | null, state: SupervisionState | undefined): Promise<void> {
  const warn = (what: string) => (err: Error) => ctx.log.warn({ err: err.message }, `${what} failed`);
  const db = ctx.task.environment.database;
  const taken = snaps && state ? await snaps.final(state, rescoreArchives(ctx.workspace)) : null;
  if (taken) keepForRescore(ctx.runDir, taken.alongside);
  else await captureForRescore(ctx.sandbox, ctx.container, ctx.workspace, ctx.runDir).catch(warn('workspace snapshot'));
  if (!db) return;
  const dumped = taken?.dumps[dumpName(db)];
  if (dumped) keepDatabaseDump(ctx.runDir, dumped);
  else await captureDatabase(ctx.sandbox, i.ref.stack.services[db.service].container, db, ctx.runDir).catch(warn('database snapshot'));
}

/** Heartbeat (without details: nothing to re-attach to yet) while a slow preparation step runs. */
async function withBeats<T>(actx: Context, f: () => Promise<T>): Promise<T> {
  const t = setInterval(() => actx.heartbeat(), 10_000);
  try {
    return await f();
  } finally {
    clearInterval(t);
  }
}

/**
 * Agents that talk to a model get a per-rollout LLM relay (src/agents/llm-relay.ts) on the rollout
 * network's gateway: agents in the app container and sidecar agents (OpenHands, on the rollout
 * network too) reach it there and nowhere else. The real key stays in this process.
 */
async function startRelayFor(driver: AgentDriver, ctx: AgentContext, i: RunAgentInput, gate: Gate | undefined, resumed: boolean): Promise<{ relay: Relay; model: ResolvedModel } | null> {
  if (!driver.modelApis) return null;
  const m = resolveModel(i.model);
  checkAgentModel(driver, m);
  const upstream = upstreamOf(m);
  const bindHost = await ctx.sandbox.gateway(i.ref.stack.network, ctx.container);
  const relay = await startRelay({ key: i.ref.rolloutKey, bindHost, upstream, stateDir: join(i.ref.runDir, 'agent'), bodyOverrides: m.relayBodyOverrides, settings: m, price: m.price, model: m.snapshot, log: ctx.log, gate,
    // metering survives a worker crash: the stats are on disk after every answer; a resumed run continues them
    statsFile: join(i.ref.runDir, 'agent', 'relay-stats.json'), resumeStats: resumed });
  ctx.llm = { baseUrl: relay.url, token: relay.token };
  return { relay, model: m };
}

/** The rate governor's gate when the model's provider has limits (src/governor); none: no Temporal calls. */
function gateFor(driver: AgentDriver, i: RunAgentInput): Gate | undefined {
  if (!driver.modelApis) return undefined;
  const m = resolveModel(i.model);
  const limits = governorLimits(m.providerName, m.providerConfig.limits);
  return limits ? governorGate(providerGovernor(m.providerName, limits), i.ref.rolloutKey) : undefined;
}

/**
 * Agents that talk to a model get the egress proxy (task.yaml network.allow) and the firewall opened
 * for it and the relay (src/security/agent-network.ts); their launches get the proxy environment.
 * A sidecar agent also gets the exec proxy into the app container (DOCKER_HOST). Oracle and noop
 * need no network.
 */
async function openNetworkFor(driver: AgentDriver, ctx: AgentContext, relay: Relay | null): Promise<(AgentNetwork & { gateway: string; relayPort?: number }) | null> {
  if (!driver.modelApis) return null;
  const gateway = await ctx.sandbox.gateway(ctx.stack.network, ctx.container);
  const net = await openAgentNetwork({
    rolloutKey: ctx.rolloutKey,
    project: ctx.stack.project,
    gateway,
    runDir: ctx.runDir,
    allow: ctx.task.network?.allow ?? [],
    relayPort: relay?.port,
    noProxy: Object.keys(ctx.stack.services),
    execInto: driver.processContainer ? { container: ctx.container } : undefined,
    log: ctx.log,
  });
  ctx.extraEnv = net.env;
  return { ...net, gateway, relayPort: relay?.port };
}

/** What the audit needs to classify sandbox attempts (src/agents/integrity.ts SandboxFacts). */
async function sandboxFacts(ctx: AgentContext, net: (AgentNetwork & { gateway: string; relayPort?: number }) | null): Promise<SandboxFacts> {
  const own: string[] = [];
  for (const s of Object.values(ctx.stack.services)) {
    own.push(...(await ctx.sandbox.addresses(s.container)));
  }
  const hostAddresses = Object.values(networkInterfaces()).flatMap((l) => (l ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address));
  const proxyPort = net ? Number(new URL(net.proxyUrl).port) : undefined;
  return {
    gateway: net?.gateway,
    allowedPorts: [net?.relayPort, proxyPort, net?.execProxyPort].filter((p): p is number => typeof p === 'number'),
    hostAddresses,
    ownAddresses: own,
    egressDenied: readEgressLog(join(ctx.runDir, 'agent')).filter((d) => !d.allowed),
    limits: await limitSignals(ctx.sandbox, ctx.container),
    // a sidecar agent (exec proxy open) works in the app container by `docker exec`: not an escape
    ...(net?.execProxyPort !== undefined ? { execContainer: ctx.container } : {}),
  };
}

/** The agent's transcript → trajectory.json, trajectory.atif.json and the integrity verdict. */
async function finishRun(driver: AgentDriver, ctx: AgentContext, task: Task, run: AgentRunSummary, net: (AgentNetwork & { gateway: string; relayPort?: number }) | null = null): Promise<AgentRunSummary> {
  if (!driver.finalize) return run;
  const attempts = readAttempts(ctx.runDir, run.history);
  const trajectory = await driver.finalize(ctx, attempts);
  const files: string[] = [];
  if (trajectory) {
    const full = { ...trajectory, exitReason: run.exitReason, agentSeconds: run.agentSeconds, attemptsRecord: run.history };
    writeJson(join(ctx.runDir, 'trajectory.json'), full);
    writeJson(join(ctx.runDir, 'trajectory.atif.json'), toAtif(trajectory, { saasbench: { rollout: ctx.rolloutKey, exit_reason: run.exitReason, agent_seconds: run.agentSeconds, attempts: run.history } }));
    files.push('trajectory.json', 'trajectory.atif.json');
  }
  const rawLines = attempts.flatMap((a) => a.stdout.split('\n'));
  const integrity = auditTranscript(task, trajectory, rawLines, await sandboxFacts(ctx, net));
  writeJson(join(ctx.runDir, 'integrity.json'), integrity);
  if (integrity.verdict !== 'clean') ctx.log.warn({ verdict: integrity.verdict, evaluatorHits: integrity.evaluatorHits, forbiddenSourceHits: integrity.forbiddenSourceHits }, 'transcript audit found something');
  const events = driver.transcriptFile;
  return { ...run, ...(trajectory ? { trajectory: summarize(trajectory, [...(events ? [events] : []), ...files, 'integrity.json']), cliVersion: trajectory.agentVersion } : {}), integrity };
}
