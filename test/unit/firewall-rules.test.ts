// The restore scripts of the rollout firewall (src/sandbox/firewall-rules.ts), computed from dumps
// written here in the form iptables-save prints them (implicit `-m tcp`, sorted conntrack states).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyScript, normRule, parseFilterTable, removeScript, v6ApplyScript, v6RemoveScript } from '../../src/sandbox/firewall-rules';

const n = { bridge: 'sb-0123456789ab', inChain: 'SBI-0123456789ab', fwdChain: 'SBF-0123456789ab' };
const other = { bridge: 'sb-ba9876543210', inChain: 'SBI-ba9876543210', fwdChain: 'SBF-ba9876543210' };

const complete = (port?: number) =>
  [
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD DROP [0:0]',
    `:${n.fwdChain} - [0:0]`,
    `:${n.inChain} - [0:0]`,
    ':DOCKER-USER - [0:0]',
    `-A INPUT -i ${n.bridge} -j ${n.inChain}`,
    `-A FORWARD -i ${n.bridge} -j ${n.fwdChain}`,
    `-A FORWARD -o ${n.bridge} -j ${n.fwdChain}`,
    '-A FORWARD -j DOCKER-USER',
    `-A ${n.fwdChain} -i ${n.bridge} -o ${n.bridge} -j RETURN`,
    `-A ${n.fwdChain} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
    `-A ${n.fwdChain} -p tcp -j REJECT --reject-with tcp-reset`,
    `-A ${n.fwdChain} -j REJECT --reject-with icmp-port-unreachable`,
    ...(port ? [`-A ${n.inChain} -d 172.30.0.1/32 -p tcp -m tcp --dport ${port} -j ACCEPT`] : []),
    `-A ${n.inChain} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    `-A ${n.inChain} -p tcp -j REJECT --reject-with tcp-reset`,
    `-A ${n.inChain} -p udp -j REJECT --reject-with icmp-port-unreachable`,
    `-A ${n.inChain} -j DROP`,
    'COMMIT',
  ].join('\n');

const lines = (s: string | null) => (s ?? '').split('\n').filter((l) => l && l !== '*filter' && l !== 'COMMIT');

test('normRule: what we write and what iptables prints compare equal', () => {
  assert.equal(normRule('-d 1.2.3.4/32 -p tcp -m tcp --dport 80 -j ACCEPT'), normRule('-d 1.2.3.4/32 -p tcp  --dport 80 -j ACCEPT'));
  assert.equal(normRule('-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT'), normRule('-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT'));
  assert.notEqual(normRule('-p tcp --dport 80 -j ACCEPT'), normRule('-p tcp --dport 81 -j ACCEPT'));
});

test('an empty table gets both chains, their bodies and the three jumps in one script', () => {
  const s = lines(applyScript(parseFilterTable(':INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n'), n));
  assert.deepEqual(s.slice(0, 2), [`:${n.inChain} - [0:0]`, `:${n.fwdChain} - [0:0]`], 'chains declared before any rule');
  assert.equal(s.filter((l) => l.startsWith(`-A ${n.inChain} `)).length, 4);
  assert.equal(s.filter((l) => l.startsWith(`-A ${n.fwdChain} `)).length, 4);
  assert.deepEqual(s.slice(-3), [`-I FORWARD 1 -o ${n.bridge} -j ${n.fwdChain}`, `-I FORWARD 1 -i ${n.bridge} -j ${n.fwdChain}`, `-I INPUT 1 -i ${n.bridge} -j ${n.inChain}`]);
});

test('a complete table (with an opened port) needs nothing: no process is spawned', () => {
  assert.equal(applyScript(parseFilterTable(complete()), n), null);
  assert.equal(applyScript(parseFilterTable(complete(4711)), n), null);
  assert.equal(v6ApplyScript(parseFilterTable(`-P INPUT ACCEPT\n-A INPUT -i ${n.bridge} -j DROP\n-A FORWARD -o ${n.bridge} -j DROP\n-A FORWARD -i ${n.bridge} -j DROP\n`), n.bridge), null);
});

test('a damaged SBI chain is rebuilt with its opened ports first; the jumps are left alone', () => {
  const dump = complete(4711).replace(`-A ${n.inChain} -j DROP\n`, '');
  const s = lines(applyScript(parseFilterTable(dump), n));
  assert.deepEqual(s, [
    `:${n.inChain} - [0:0]`,
    `-A ${n.inChain} -d 172.30.0.1/32 -p tcp -m tcp --dport 4711 -j ACCEPT`,
    `-A ${n.inChain} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    `-A ${n.inChain} -p tcp -j REJECT --reject-with tcp-reset`,
    `-A ${n.inChain} -p udp -j REJECT --reject-with icmp-port-unreachable`,
    `-A ${n.inChain} -j DROP`,
  ]);
});

test('duplicate jumps (two racing applies) are cut back to one; a missing one is inserted', () => {
  const dump = complete().replace(`-A INPUT -i ${n.bridge} -j ${n.inChain}\n`, `-A INPUT -i ${n.bridge} -j ${n.inChain}\n`.repeat(3)).replace(`-A FORWARD -o ${n.bridge} -j ${n.fwdChain}\n`, '');
  assert.deepEqual(lines(applyScript(parseFilterTable(dump), n)), [
    `-I FORWARD 1 -o ${n.bridge} -j ${n.fwdChain}`,
    `-D INPUT -i ${n.bridge} -j ${n.inChain}`,
    `-D INPUT -i ${n.bridge} -j ${n.inChain}`,
  ]);
});

test('remove: every jump to the chains, then flush and delete them; nothing of another rollout; nothing when absent', () => {
  const dump = `${complete(4711)}\n:${other.inChain} - [0:0]\n-A INPUT -i ${other.bridge} -j ${other.inChain}\n-A DOCKER-USER -g ${n.fwdChain}\n`;
  const s = lines(removeScript(parseFilterTable(dump), [n]));
  assert.deepEqual(s.filter((l) => l.startsWith('-D ')).sort(), [
    `-D DOCKER-USER -g ${n.fwdChain}`,
    `-D FORWARD -i ${n.bridge} -j ${n.fwdChain}`,
    `-D FORWARD -o ${n.bridge} -j ${n.fwdChain}`,
    `-D INPUT -i ${n.bridge} -j ${n.inChain}`,
  ]);
  assert.deepEqual(s.slice(-4).sort(), [`-F ${n.fwdChain}`, `-F ${n.inChain}`, `-X ${n.fwdChain}`, `-X ${n.inChain}`].sort());
  assert.ok(!s.some((l) => l.includes(other.inChain)));
  assert.equal(removeScript(parseFilterTable(':INPUT ACCEPT [0:0]\n'), [n]), null);
  const v6 = `-A INPUT -i ${n.bridge} -j DROP\n-A FORWARD -i ${n.bridge} -j DROP\n-A FORWARD -i ${n.bridge} -j DROP\n-A INPUT -i ${other.bridge} -j DROP\n`;
  assert.deepEqual(lines(v6RemoveScript(parseFilterTable(v6), [n.bridge])), [`-D INPUT -i ${n.bridge} -j DROP`, `-D FORWARD -i ${n.bridge} -j DROP`, `-D FORWARD -i ${n.bridge} -j DROP`]);
});
