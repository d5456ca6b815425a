/**
 * Host firewall of a rollout's bridge network (iptables; docs/security.md).
 *
 * Every rollout network is a Linux bridge with a deterministic name (`sb-<12 hex>`, set through
 * `com.docker.network.bridge.name`) and IP masquerading switched off. Two chains per rollout, jumped
 * to from the top of the built-in chains, make it a dead end:
 *
 *   SBI-<h>  (INPUT, -i sb-<h>): what the containers may reach ON THE WORKER HOST — replies to
 *            connections the host opened (docker-proxy → container, the evaluator's probes), plus
 *            the TCP ports opened for this rollout (the LLM relay, the egress proxy, a P27 webhook
 *            receiver), each on the bridge's gateway address only; everything else is rejected.
 *   SBF-<h>  (FORWARD, -i/-o sb-<h>): traffic between the rollout's own containers, and replies;
 *            anything else routed through the host (the internet, other bridges, other rollouts,
 *            the host's LAN) is rejected.
 *
 * IPv6 on the bridge is dropped outright (the networks are IPv4-only).
 *
 * A rollout's chains, bodies and jumps are installed in ONE `iptables-restore --noflush` transaction
 * computed from one `iptables-save -t filter` read (firewall-rules.ts), so a stack never has half a
 * firewall and a rollout costs two processes, not thirty. Idempotent: a re-apply adds only what is
 * missing, never a second copy, and keeps the ports openHostPort opened. `removeStackFirewall` takes
 * them out the same way on teardown, and chains left behind by a crash are removed by
 * `reapOrphanFirewalls` once their bridge is gone. The mode comes from SAASBENCH_FIREWALL: `auto`
 * (default: apply when iptables works, else warn and record that it is off), `required` (no rollout
 * starts without it), `off`.
 */
import { coRun } from '../co-process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { log } from '../log';
import { SaasbenchError } from '../errors';
import { applyScript, normRule, parseFilterTable, portRule, removeScript, v6ApplyScript, v6RemoveScript, type FilterTable, type FirewallNames } from './firewall-rules';

export type FirewallMode = 'auto' | 'required' | 'off';

export interface FirewallStatus {
  /** true when the rules are in place */
  applied: boolean;
  mode: FirewallMode;
  /** why the firewall is not applied (mode off, iptables unavailable, remote Docker host) */
  reason?: string;
}

export class FirewallError extends SaasbenchError {
  static override readonly nonRetryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'FirewallError';
  }
}

export function firewallMode(): FirewallMode {
  const v = (process.env.SAASBENCH_FIREWALL ?? 'auto').trim().toLowerCase();
  if (v === 'auto' || v === 'required' || v === 'off') return v;
  throw new FirewallError(`SAASBENCH_FIREWALL=${v}: expected auto, required or off`);
}

const hashOf = (project: string) => createHash('sha256').update(project).digest('hex').slice(0, 12);

/** Bridge interface and chain names of a rollout project (deterministic: a retry or a reaper finds them). */
export const firewallNames = (project: string): FirewallNames => namesOf(hashOf(project));
const namesOf = (h: string): FirewallNames => ({ bridge: `sb-${h}`, inChain: `SBI-${h}`, fwdChain: `SBF-${h}` });

const iptablesBin = () => process.env.SAASBENCH_IPTABLES ?? 'iptables';
const ip6tablesBin = () => process.env.SAASBENCH_IP6TABLES ?? 'ip6tables';
// iptables-save / iptables-restore are taken next to the binary (iptables-nft → iptables-nft-save, a
// path keeps its folder): an override must have both beside it
const saveBin = (bin: string) => `${bin}-save`;
const restoreBin = (bin: string) => `${bin}-restore`;

interface RunResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** One command (through the shared command shell: src/co-process.ts); `input` goes to its stdin. Never throws. */
async function run(bin: string, args: string[], input?: string): Promise<RunResult> {
  const r = await coRun(bin, args, { input, timeoutMs: 30_000 });
  return { ok: r.ok, stdout: r.stdout, stderr: r.stderr };
}

/** iptables itself: waits up to 10 s for the xtables lock. */
const ipt = (bin: string, args: string[]) => run(bin, ['-w', '10', ...args]);

async function readTable(bin: string): Promise<FilterTable> {
  const r = await run(saveBin(bin), ['-t', 'filter']);
  if (!r.ok) throw new FirewallError(`${saveBin(bin)} -t filter: ${r.stderr.trim()}`);
  return parseFilterTable(r.stdout);
}

/** One atomic transaction; the table is left untouched when any line fails. */
async function restore(bin: string, text: string): Promise<RunResult> {
  return run(restoreBin(bin), ['--noflush', '-w', '10'], text);
}

/**
 * Read the table, compute the script, run it. A failed transaction is retried once from a fresh read
 * (another process may have changed the table in between: a -D of a rule it removed fails).
 */
async function converge(bin: string, plan: (t: FilterTable) => string | null): Promise<RunResult> {
  let r: RunResult = { ok: true, stdout: '', stderr: '' };
  for (let attempt = 0; attempt < 2; attempt++) {
    const text = plan(await readTable(bin));
    if (text === null) return { ok: true, stdout: '', stderr: '' };
    r = await restore(bin, text);
    if (r.ok) return r;
  }
  return r;
}

/** Best effort (ip6tables may be absent, or IPv6 off): never throws. */
const converge6 = (plan: (t: FilterTable) => string | null): Promise<unknown> => converge(ip6tablesBin(), plan).catch(() => undefined);

// Firewall changes of this process one at a time: each is a read then a write, and two interleaved
// ones (an apply racing an openHostPort of the same rollout) could undo each other.
let queue: Promise<unknown> = Promise.resolve();
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

let availability: Promise<string | null> | undefined;

/** null when iptables (and its -save/-restore) can be used here, else the reason it cannot. */
function unavailableReason(): Promise<string | null> {
  availability ??= (async () => {
    const dh = process.env.DOCKER_HOST;
    if (dh && !dh.startsWith('unix://')) return `DOCKER_HOST=${dh} is not local: this host's firewall does not guard its containers`;
    if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'the worker is not root (iptables needs CAP_NET_ADMIN)';
    const bin = iptablesBin();
    const checks: [string, Promise<RunResult>][] = [
      [bin, ipt(bin, ['-S', 'INPUT'])],
      [saveBin(bin), run(saveBin(bin), ['-t', 'filter'])],
      [restoreBin(bin), run(restoreBin(bin), ['--version'])],
    ];
    for (const [name, p] of checks) {
      const r = await p;
      if (!r.ok) return `${name} does not work here: ${r.stderr.trim().split('\n')[0]}`;
    }
    return null;
  })();
  return availability;
}

/** What applyStackFirewall would do on this host, without doing it. */
export async function firewallPlan(): Promise<FirewallStatus> {
  const mode = firewallMode();
  if (mode === 'off') return { applied: false, mode, reason: 'SAASBENCH_FIREWALL=off' };
  const why = await unavailableReason();
  if (why && mode === 'required') throw new FirewallError(`SAASBENCH_FIREWALL=required but ${why}`);
  return why ? { applied: false, mode, reason: why } : { applied: true, mode };
}

let warned = false;

/**
 * Install (or re-check) the chains of a rollout's bridge. Call after the network exists and before
 * any container of it starts. Idempotent: one `iptables-save` read and, when anything is missing,
 * one `iptables-restore --noflush` transaction (IPv6 alongside, best effort).
 */
export async function applyStackFirewall(project: string): Promise<FirewallStatus> {
  const plan = await firewallPlan();
  if (!plan.applied) {
    if (!warned && plan.mode !== 'off') log.warn({ reason: plan.reason }, 'rollout firewall is OFF: containers can reach the worker host and the network');
    warned = true;
    return plan;
  }
  await serial(() => applyNames(firewallNames(project)));
  return plan;
}

async function applyNames(n: FirewallNames): Promise<void> {
  const [v4] = await Promise.all([converge(iptablesBin(), (t) => applyScript(t, n)), converge6((t) => v6ApplyScript(t, n.bridge))]);
  if (!v4.ok) throw new FirewallError(`${restoreBin(iptablesBin())} (chains of ${n.bridge}): ${v4.stderr.trim()}`);
}

/** Let the rollout's containers reach `gateway:port` on this host (the relay, the egress proxy, a webhook receiver). */
export async function openHostPort(project: string, gateway: string, port: number): Promise<void> {
  if (!(await firewallPlan()).applied) return;
  const n = firewallNames(project);
  const rule = portRule(gateway, port);
  await serial(async () => {
    let chain = await ipt(iptablesBin(), ['-S', n.inChain]);
    // a stack started while the firewall was off (or by an older worker) gets its chains now
    if (!chain.ok) {
      await applyNames(n);
      chain = { ok: true, stdout: '', stderr: '' };
    }
    if (parseFilterTable(chain.stdout).rules.get(n.inChain)?.some((r) => normRule(r) === normRule(rule))) return;
    // at the top: ahead of the chain's fixed reject tail
    const r = await ipt(iptablesBin(), ['-I', n.inChain, '1', ...rule.split(' ')]);
    if (!r.ok) throw new FirewallError(`${iptablesBin()} -I ${n.inChain} 1 ${rule}: ${r.stderr.trim()}`);
  });
}

export async function closeHostPort(project: string, gateway: string, port: number): Promise<void> {
  if (!(await firewallPlan()).applied) return;
  const { inChain } = firewallNames(project);
  const rule = portRule(gateway, port).split(' ');
  // every copy; stops at the first failure (none left, or no chain)
  await serial(async () => {
    for (let i = 0; i < 20; i++) if (!(await ipt(iptablesBin(), ['-D', inChain, ...rule])).ok) return;
  });
}

/** The host ports currently open to a rollout (for tests and `isolation.json`). */
export async function openPorts(project: string): Promise<number[]> {
  const r = await ipt(iptablesBin(), ['-S', firewallNames(project).inChain]);
  if (!r.ok) return [];
  return [...r.stdout.matchAll(/--dport (\d+) -j ACCEPT/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
}

/** Remove a rollout's chains and jumps. Idempotent; a no-op where the firewall is off. */
export async function removeStackFirewall(project: string): Promise<void> {
  if ((await unavailableReason()) !== null) return;
  await serial(() => removeNames([firewallNames(project)]));
}

/** One transaction for all of them (jumps, then the chains); IPv6 alongside, best effort. */
async function removeNames(names: FirewallNames[]): Promise<void> {
  const [v4] = await Promise.all([
    converge(iptablesBin(), (t) => removeScript(t, names)),
    converge6((t) => v6RemoveScript(t, names.map((n) => n.bridge))),
  ]);
  if (!v4.ok) throw new FirewallError(`cannot delete chains ${names.flatMap((n) => [n.inChain, n.fwdChain]).join(' ')}: ${v4.stderr.trim()}`);
}

const chainHashes = (t: FilterTable) => [...new Set([...t.chains].flatMap((c) => /^SB[IF]-([0-9a-f]{12})$/.exec(c)?.[1] ?? []))];

/** Chains of rollouts whose bridge no longer exists (a crash between network removal and cleanup). */
export async function reapOrphanFirewalls(): Promise<string[]> {
  if ((await unavailableReason()) !== null) return [];
  return serial(async () => {
    const orphans = chainHashes(await readTable(iptablesBin()))
      .map(namesOf)
      .filter((n) => !existsSync(`/sys/class/net/${n.bridge}`));
    if (orphans.length) await removeNames(orphans);
    return orphans.map((n) => n.bridge);
  });
}

/** Every saasbench chain present (tests: nothing may be left behind). */
export async function listFirewallChains(): Promise<string[]> {
  const r = await run(saveBin(iptablesBin()), ['-t', 'filter']);
  if (!r.ok) return [];
  return [...parseFilterTable(r.stdout).chains].filter((c) => /^SB[IF]-[0-9a-f]{12}$/.test(c)).sort();
}
