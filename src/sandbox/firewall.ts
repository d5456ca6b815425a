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
 * Rules are idempotent (checked with -C before insertion), removed by `removeStackFirewall` on
 * teardown, and chains left behind by a crash are removed by `reapOrphanFirewalls` once their bridge
 * is gone. The mode comes from SAASBENCH_FIREWALL: `auto` (default: apply when iptables works, else
 * warn and record that it is off), `required` (no rollout starts without it), `off`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { log } from '../log';
import { SaasbenchError } from '../errors';

const execFileP = promisify(execFile);

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
export function firewallNames(project: string): { bridge: string; inChain: string; fwdChain: string } {
  const h = hashOf(project);
  return { bridge: `sb-${h}`, inChain: `SBI-${h}`, fwdChain: `SBF-${h}` };
}

const iptablesBin = () => process.env.SAASBENCH_IPTABLES ?? 'iptables';
const ip6tablesBin = () => process.env.SAASBENCH_IP6TABLES ?? 'ip6tables';

async function run(bin: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(bin, ['-w', '10', ...args], { timeout: 30_000 });
    return { ok: true, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, stdout: e.stdout ?? '', stderr: e.stderr || e.message };
  }
}

async function must(bin: string, args: string[]): Promise<void> {
  const r = await run(bin, args);
  if (!r.ok) throw new FirewallError(`${bin} ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** -C then -I/-A: a rule is never added twice. */
async function ensure(bin: string, table: 'INPUT' | 'FORWARD' | string, rule: string[], position: 'top' | 'end' = 'top'): Promise<void> {
  if ((await run(bin, ['-C', table, ...rule])).ok) return;
  await must(bin, position === 'top' ? ['-I', table, '1', ...rule] : ['-A', table, ...rule]);
}

/** Delete every copy of a rule (tolerates its absence). */
async function removeAll(bin: string, table: string, rule: string[]): Promise<void> {
  for (let i = 0; i < 20; i++) if (!(await run(bin, ['-D', table, ...rule])).ok) return;
}

let availability: Promise<string | null> | undefined;

/** null when iptables can be used here, else the reason it cannot. */
function unavailableReason(): Promise<string | null> {
  availability ??= (async () => {
    const dh = process.env.DOCKER_HOST;
    if (dh && !dh.startsWith('unix://')) return `DOCKER_HOST=${dh} is not local: this host's firewall does not guard its containers`;
    if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'the worker is not root (iptables needs CAP_NET_ADMIN)';
    const r = await run(iptablesBin(), ['-S', 'INPUT']);
    return r.ok ? null : `iptables does not work here: ${r.stderr.trim().split('\n')[0]}`;
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
 * any container of it starts. Idempotent.
 */
export async function applyStackFirewall(project: string): Promise<FirewallStatus> {
  const plan = await firewallPlan();
  if (!plan.applied) {
    if (!warned && plan.mode !== 'off') log.warn({ reason: plan.reason }, 'rollout firewall is OFF: containers can reach the worker host and the network');
    warned = true;
    return plan;
  }
  const { bridge, inChain, fwdChain } = firewallNames(project);
  const ipt = iptablesBin();
  for (const chain of [inChain, fwdChain]) {
    const exists = (await run(ipt, ['-S', chain])).ok;
    if (!exists) await must(ipt, ['-N', chain]);
  }
  // chain bodies: rebuilt only when they do not look complete (the dynamic port rules of
  // openHostPort sit above the fixed tail and survive a re-apply)
  const inTail: string[][] = [
    ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'],
    ['-p', 'tcp', '-j', 'REJECT', '--reject-with', 'tcp-reset'],
    ['-p', 'udp', '-j', 'REJECT', '--reject-with', 'icmp-port-unreachable'],
    ['-j', 'DROP'],
  ];
  const fwdBody: string[][] = [
    ['-i', bridge, '-o', bridge, '-j', 'RETURN'],
    ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'RETURN'],
    ['-p', 'tcp', '-j', 'REJECT', '--reject-with', 'tcp-reset'],
    ['-j', 'REJECT', '--reject-with', 'icmp-port-unreachable'],
  ];
  for (const r of inTail) await ensure(ipt, inChain, r, 'end');
  for (const r of fwdBody) await ensure(ipt, fwdChain, r, 'end');
  // jumps at the top of the built-in chains, ahead of Docker's own ACCEPT rules for the bridge
  await ensure(ipt, 'FORWARD', ['-o', bridge, '-j', fwdChain]);
  await ensure(ipt, 'FORWARD', ['-i', bridge, '-j', fwdChain]);
  await ensure(ipt, 'INPUT', ['-i', bridge, '-j', inChain]);
  // IPv6: nothing legitimate uses it on these bridges; best effort (ip6tables may be absent)
  for (const [table, rule] of v6Rules(bridge)) {
    if (!(await run(ip6tablesBin(), ['-C', table, ...rule])).ok) await run(ip6tablesBin(), ['-I', table, '1', ...rule]);
  }
  return plan;
}

function v6Rules(bridge: string): [string, string[]][] {
  return [
    ['INPUT', ['-i', bridge, '-j', 'DROP']],
    ['FORWARD', ['-i', bridge, '-j', 'DROP']],
    ['FORWARD', ['-o', bridge, '-j', 'DROP']],
  ];
}

const portRule = (gateway: string, port: number) => ['-d', `${gateway}/32`, '-p', 'tcp', '--dport', String(port), '-j', 'ACCEPT'];

/** Let the rollout's containers reach `gateway:port` on this host (the relay, the egress proxy, a webhook receiver). */
export async function openHostPort(project: string, gateway: string, port: number): Promise<void> {
  if (!(await firewallPlan()).applied) return;
  const { inChain } = firewallNames(project);
  // a stack started while the firewall was off (or by an older worker) gets its chains now
  if (!(await run(iptablesBin(), ['-S', inChain])).ok) await applyStackFirewall(project);
  await ensure(iptablesBin(), inChain, portRule(gateway, port));
}

export async function closeHostPort(project: string, gateway: string, port: number): Promise<void> {
  if (!(await firewallPlan()).applied) return;
  await removeAll(iptablesBin(), firewallNames(project).inChain, portRule(gateway, port));
}

/** The host ports currently open to a rollout (for tests and `isolation.json`). */
export async function openPorts(project: string): Promise<number[]> {
  const r = await run(iptablesBin(), ['-S', firewallNames(project).inChain]);
  if (!r.ok) return [];
  return [...r.stdout.matchAll(/--dport (\d+) -j ACCEPT/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
}

/** Remove a rollout's chains and jumps. Idempotent; a no-op where the firewall is off. */
export async function removeStackFirewall(project: string): Promise<void> {
  if ((await unavailableReason()) !== null) return;
  await removeByNames(firewallNames(project));
}

async function removeByNames(n: { bridge: string; inChain: string; fwdChain: string }): Promise<void> {
  const ipt = iptablesBin();
  await removeAll(ipt, 'INPUT', ['-i', n.bridge, '-j', n.inChain]);
  await removeAll(ipt, 'FORWARD', ['-i', n.bridge, '-j', n.fwdChain]);
  await removeAll(ipt, 'FORWARD', ['-o', n.bridge, '-j', n.fwdChain]);
  for (const chain of [n.inChain, n.fwdChain]) {
    if (!(await run(ipt, ['-S', chain])).ok) continue;
    await run(ipt, ['-F', chain]);
    const del = await run(ipt, ['-X', chain]);
    if (!del.ok) throw new FirewallError(`cannot delete chain ${chain}: ${del.stderr.trim()}`);
  }
  for (const [table, rule] of v6Rules(n.bridge)) await removeAll(ip6tablesBin(), table, rule);
}

/** Chains of rollouts whose bridge no longer exists (a crash between network removal and cleanup). */
export async function reapOrphanFirewalls(): Promise<string[]> {
  if ((await unavailableReason()) !== null) return [];
  const r = await run(iptablesBin(), ['-S']);
  if (!r.ok) return [];
  const hashes = new Set([...r.stdout.matchAll(/^-N SB[IF]-([0-9a-f]{12})$/gm)].map((m) => m[1]));
  const removed: string[] = [];
  for (const h of hashes) {
    const n = { bridge: `sb-${h}`, inChain: `SBI-${h}`, fwdChain: `SBF-${h}` };
    if (existsSync(`/sys/class/net/${n.bridge}`)) continue;
    await removeByNames(n);
    removed.push(n.bridge);
  }
  return removed;
}

/** Every saasbench chain present (tests: nothing may be left behind). */
export async function listFirewallChains(): Promise<string[]> {
  const r = await run(iptablesBin(), ['-S']);
  if (!r.ok) return [];
  return [...r.stdout.matchAll(/^-N (SB[IF]-[0-9a-f]{12})$/gm)].map((m) => m[1]).sort();
}
