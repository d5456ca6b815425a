/**
 * The rules of a rollout's firewall as text, and the `iptables-restore --noflush` scripts that bring
 * the filter table from what `iptables-save -t filter` shows to what a rollout needs (or remove it).
 * Pure: firewall.ts runs the processes. Rules are written in the form iptables-save prints them, so a
 * dump can be compared with them (after `normRule`) and its lines replayed verbatim.
 */

export interface FirewallNames {
  bridge: string;
  inChain: string;
  fwdChain: string;
}

/** The filter table as `iptables-save -t filter` (or `iptables -S`) prints it. */
export interface FilterTable {
  /** every chain, built-in and user-defined */
  chains: Set<string>;
  /** each chain's rule specs (the text after `-A <chain> `), in order */
  rules: Map<string, string[]>;
}

export function parseFilterTable(text: string): FilterTable {
  const chains = new Set<string>();
  const rules = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // `:CHAIN POLICY [p:b]` (save) or `-N CHAIN` / `-P CHAIN POLICY` (iptables -S)
    const decl = /^(?::|-N |-P )(\S+)/.exec(line);
    if (decl) chains.add(decl[1]);
    const rule = /^-A (\S+) (.+)$/.exec(line);
    if (rule) {
      chains.add(rule[1]);
      const list = rules.get(rule[1]) ?? [];
      list.push(rule[2]);
      rules.set(rule[1], list);
    }
  }
  return { chains, rules };
}

/**
 * A rule spec in a form that compares equal across what we write and what iptables prints: the
 * implicit `-m tcp`/`-m udp` of a `--dport` dropped, conntrack states sorted, spaces collapsed.
 */
export function normRule(spec: string): string {
  return spec
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/ -m (tcp|udp)(?= --[ds]port )/g, '')
    .replace(/--ctstate (\S+)/g, (_, s: string) => `--ctstate ${s.split(',').sort().join(',')}`);
}

const CT = '-m conntrack --ctstate RELATED,ESTABLISHED';

/** SBI-<h> after the dynamic port rules: replies to the host's own connections, then reject/drop. */
export const inTail = (): string[] => [`${CT} -j ACCEPT`, '-p tcp -j REJECT --reject-with tcp-reset', '-p udp -j REJECT --reject-with icmp-port-unreachable', '-j DROP'];

/** SBF-<h>: the bridge's own traffic and replies go on (RETURN to Docker's rules), the rest is rejected. */
export const fwdBody = (bridge: string): string[] => [
  `-i ${bridge} -o ${bridge} -j RETURN`,
  `${CT} -j RETURN`,
  '-p tcp -j REJECT --reject-with tcp-reset',
  '-j REJECT --reject-with icmp-port-unreachable',
];

/** Jumps from the built-in chains, in insertion order (each goes to position 1, so the last ends on top). */
export const jumps = (n: FirewallNames): [string, string][] => [
  ['FORWARD', `-o ${n.bridge} -j ${n.fwdChain}`],
  ['FORWARD', `-i ${n.bridge} -j ${n.fwdChain}`],
  ['INPUT', `-i ${n.bridge} -j ${n.inChain}`],
];

/** IPv6 on a rollout bridge: dropped (the networks are IPv4-only). Same insertion order as `jumps`. */
export const v6Rules = (bridge: string): [string, string][] => [
  ['INPUT', `-i ${bridge} -j DROP`],
  ['FORWARD', `-i ${bridge} -j DROP`],
  ['FORWARD', `-o ${bridge} -j DROP`],
];

/** A port opened by openHostPort: TCP to the bridge's gateway address only. */
export const portRule = (gateway: string, port: number): string => `-d ${gateway}/32 -p tcp --dport ${port} -j ACCEPT`;
const isPortRule = (spec: string) => /^-d \S+\/32 -p tcp --dport \d+ -j ACCEPT$/.test(normRule(spec));

const sameList = (have: string[], want: string[]) => have.length === want.length && have.every((r, i) => normRule(r) === normRule(want[i]));

/** `*filter … COMMIT` around the lines, or null when there is nothing to do (no process is spawned). */
const script = (lines: string[]): string | null => (lines.length ? ['*filter', ...lines, 'COMMIT', ''].join('\n') : null);

/**
 * Exactly one copy of each rule in its built-in chain: a missing one is inserted at the top, extra
 * copies (two racing applies) are deleted.
 */
function exactlyOnce(t: FilterTable, rules: [string, string][]): string[] {
  const out: string[] = [];
  for (const [chain, spec] of rules) {
    const n = (t.rules.get(chain) ?? []).filter((r) => normRule(r) === normRule(spec)).length;
    if (n === 0) out.push(`-I ${chain} 1 ${spec}`);
    for (let i = 1; i < n; i++) out.push(`-D ${chain} ${spec}`);
  }
  return out;
}

/**
 * What makes the rollout's chains whole: a missing chain is created with its body; a chain whose body
 * is not exactly as expected is rebuilt (declaring an existing chain in `--noflush` mode flushes it)
 * with SBI's port ACCEPT rules carried over verbatim ahead of the tail; the jumps exist exactly once.
 * A complete, correct table yields null.
 */
export function applyScript(t: FilterTable, n: FirewallNames): string | null {
  const decl: string[] = [];
  const body: string[] = [];
  const inRules = t.rules.get(n.inChain) ?? [];
  const ports = inRules.filter(isPortRule);
  const inOk = t.chains.has(n.inChain) && sameList(inRules.slice(0, ports.length), ports) && sameList(inRules.slice(ports.length), inTail());
  if (!inOk) {
    decl.push(`:${n.inChain} - [0:0]`);
    const kept = [...new Map(ports.map((p) => [normRule(p), p])).values()];
    for (const r of [...kept, ...inTail()]) body.push(`-A ${n.inChain} ${r}`);
  }
  if (!(t.chains.has(n.fwdChain) && sameList(t.rules.get(n.fwdChain) ?? [], fwdBody(n.bridge)))) {
    decl.push(`:${n.fwdChain} - [0:0]`);
    for (const r of fwdBody(n.bridge)) body.push(`-A ${n.fwdChain} ${r}`);
  }
  return script([...decl, ...body, ...exactlyOnce(t, jumps(n))]);
}

/** Every rule that jumps to one of `chains` (from any other chain), then flush and delete the chains. */
export function removeScript(t: FilterTable, names: FirewallNames[]): string | null {
  const ours = new Set(names.flatMap((n) => [n.inChain, n.fwdChain]));
  const lines: string[] = [];
  for (const [chain, specs] of t.rules) {
    if (ours.has(chain)) continue;
    for (const spec of specs) {
      const target = / -[jg] (\S+)(?: |$)/.exec(` ${spec}`)?.[1];
      if (target && ours.has(target)) lines.push(`-D ${chain} ${spec}`);
    }
  }
  for (const c of ours) if (t.chains.has(c)) lines.push(`-F ${c}`, `-X ${c}`);
  return script(lines);
}

/** ip6tables: the DROP rules of a bridge, exactly once. */
export const v6ApplyScript = (t: FilterTable, bridge: string): string | null => script(exactlyOnce(t, v6Rules(bridge)));

/** ip6tables: every copy of the DROP rules of the bridges. */
export function v6RemoveScript(t: FilterTable, bridges: string[]): string | null {
  const lines: string[] = [];
  for (const b of bridges) {
    for (const [chain, spec] of v6Rules(b)) {
      for (const r of t.rules.get(chain) ?? []) if (normRule(r) === normRule(spec)) lines.push(`-D ${chain} ${spec}`);
    }
  }
  return script(lines);
}
