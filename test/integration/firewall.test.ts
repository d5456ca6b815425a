// The rollout firewall against the host's real iptables (root; docs/security.md): apply is idempotent
// (one copy of every jump and rule, opened ports survive a re-apply, a damaged chain is repaired),
// removal leaves nothing, orphans are reaped, a failing iptables-restore is a FirewallError, and the
// SAASBENCH_IPTABLES override finds its -save/-restore next to it. No containers: the rules only name
// interfaces; a bridge is created with `ip link` where its existence matters (the reaper).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  applyStackFirewall,
  closeHostPort,
  firewallNames,
  FirewallError,
  listFirewallChains,
  openHostPort,
  openPorts,
  reapOrphanFirewalls,
  removeStackFirewall,
} from '../../src/sandbox/firewall';

const run = `${process.pid}-${Date.now()}`;
const P = `itest-firewall.${run}.a`;
const ORPHAN = `itest-firewall.${run}.orphan`;
const LIVE = `itest-firewall.${run}.live`;
const GW = '172.30.99.1';

const save = (bin = 'iptables-save') => execFileSync(bin, ['-t', 'filter'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const v6Works = (() => {
  try {
    save('ip6tables-save');
    return true;
  } catch {
    return false;
  }
})();
/** every line of the filter table that mentions the rollout's bridge or chains */
const ours = (project: string, text = save()) => {
  const h = firewallNames(project).bridge.slice(3);
  return text.split('\n').filter((l) => l.includes(h));
};
const count = (list: string[], line: string) => list.filter((l) => l === line).length;

after(async () => {
  for (const p of [P, ORPHAN, LIVE]) await removeStackFirewall(p).catch(() => undefined);
  try {
    execFileSync('ip', ['link', 'del', firewallNames(LIVE).bridge], { stdio: 'ignore' });
  } catch {
    // not created, or already gone
  }
});

test('apply twice: exactly one copy of every jump and rule (v4 and v6)', async () => {
  const n = firewallNames(P);
  assert.equal((await applyStackFirewall(P)).applied, true, 'this test needs root and a working iptables');
  const once = ours(P);
  await applyStackFirewall(P);
  const twice = ours(P);
  assert.deepEqual(twice, once, 're-apply changed nothing');
  assert.equal(count(twice, `-A INPUT -i ${n.bridge} -j ${n.inChain}`), 1);
  assert.equal(count(twice, `-A FORWARD -i ${n.bridge} -j ${n.fwdChain}`), 1);
  assert.equal(count(twice, `-A FORWARD -o ${n.bridge} -j ${n.fwdChain}`), 1);
  assert.equal(twice.filter((l) => l.startsWith(`-A ${n.inChain} `)).length, 4);
  assert.equal(twice.filter((l) => l.startsWith(`-A ${n.fwdChain} `)).length, 4);
  assert.equal(new Set(twice).size, twice.length, 'no line twice');
  if (v6Works) {
    const v6 = ours(P, save('ip6tables-save'));
    assert.deepEqual(v6.sort(), [`-A FORWARD -i ${n.bridge} -j DROP`, `-A FORWARD -o ${n.bridge} -j DROP`, `-A INPUT -i ${n.bridge} -j DROP`]);
  }
});

test('an opened port survives a re-apply, and a damaged chain or a doubled jump is repaired around it', async () => {
  const n = firewallNames(P);
  await openHostPort(P, GW, 4711);
  await openHostPort(P, GW, 4711);
  assert.deepEqual(await openPorts(P), [4711], 'opened once');
  await applyStackFirewall(P);
  assert.deepEqual(await openPorts(P), [4711], 'kept by a re-apply');
  // damage: the chain loses its final DROP, the INPUT jump is doubled (two racing applies)
  execFileSync('iptables', ['-w', '10', '-D', n.inChain, '-j', 'DROP']);
  execFileSync('iptables', ['-w', '10', '-I', 'INPUT', '1', '-i', n.bridge, '-j', n.inChain]);
  await applyStackFirewall(P);
  const lines = ours(P);
  assert.deepEqual(
    lines.filter((l) => l.startsWith(`-A ${n.inChain} `)).map((l) => l.split(' ').slice(2).join(' ')),
    [`-d ${GW}/32 -p tcp -m tcp --dport 4711 -j ACCEPT`, '-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT', '-p tcp -j REJECT --reject-with tcp-reset', '-p udp -j REJECT --reject-with icmp-port-unreachable', '-j DROP'],
  );
  assert.equal(count(lines, `-A INPUT -i ${n.bridge} -j ${n.inChain}`), 1);
  await closeHostPort(P, GW, 4711);
  assert.deepEqual(await openPorts(P), []);
});

test('remove leaves no chain and no jump, and is idempotent', async () => {
  const n = firewallNames(P);
  await openHostPort(P, GW, 4712);
  await removeStackFirewall(P);
  assert.deepEqual(ours(P), []);
  if (v6Works) assert.deepEqual(ours(P, save('ip6tables-save')), []);
  assert.ok(!(await listFirewallChains()).includes(n.inChain));
  await removeStackFirewall(P);
});

test('the reaper removes the chains of a bridge that is gone, and only those', async () => {
  execFileSync('ip', ['link', 'add', firewallNames(LIVE).bridge, 'type', 'bridge']);
  await applyStackFirewall(LIVE);
  await applyStackFirewall(ORPHAN);
  const reaped = await reapOrphanFirewalls();
  assert.ok(reaped.includes(firewallNames(ORPHAN).bridge), reaped.join(' '));
  assert.ok(!reaped.includes(firewallNames(LIVE).bridge));
  assert.deepEqual(ours(ORPHAN), []);
  assert.equal(ours(LIVE).filter((l) => l.startsWith(':')).length, 2, 'the live rollout keeps its chains');
  await removeStackFirewall(LIVE);
  assert.deepEqual(ours(LIVE), []);
});

test('SAASBENCH_IPTABLES: -save/-restore are taken next to it; a failing restore is a FirewallError', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'saasbench-ipt-'));
  const wrap = (name: string, body: string) => {
    writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(dir, name), 0o755);
  };
  wrap('ipt', 'exec iptables "$@"');
  wrap('ipt-save', `echo save >> ${dir}/calls; exec iptables-save "$@"`);
  wrap('ipt-restore', `echo restore >> ${dir}/calls; cat >/dev/null; echo "refused by the test" >&2; exit 1`);
  const old = process.env.SAASBENCH_IPTABLES;
  try {
    await applyStackFirewall(P);
    process.env.SAASBENCH_IPTABLES = path.join(dir, 'ipt');
    await assert.rejects(removeStackFirewall(P), (e: Error) => e instanceof FirewallError && /refused by the test/.test(e.message));
    // one read and one transaction, retried once from a fresh read
    assert.equal(execFileSync('cat', [path.join(dir, 'calls')], { encoding: 'utf8' }), 'save\nrestore\nsave\nrestore\n');
  } finally {
    if (old === undefined) delete process.env.SAASBENCH_IPTABLES;
    else process.env.SAASBENCH_IPTABLES = old;
    rmSync(dir, { recursive: true, force: true });
  }
  await removeStackFirewall(P);
  assert.deepEqual(ours(P), []);
});
