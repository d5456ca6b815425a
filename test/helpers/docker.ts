import { execFileSync } from 'node:child_process';

/** Names of labelled Docker resources still present (containers, networks, volumes). */
export function labelledLeftovers(label = 'saasbench.rollout'): string[] {
  const list = (args: string[]) =>
    execFileSync('docker', args, { encoding: 'utf8' })
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
  return [
    ...list(['ps', '-a', '--filter', `label=${label}`, '--format', 'container {{.Names}}']),
    ...list(['network', 'ls', '--filter', `label=${label}`, '--format', 'network {{.Name}}']),
    ...list(['volume', 'ls', '--filter', `label=${label}`, '--format', 'volume {{.Name}}']),
  ];
}

export function labelledFor(rolloutKeyPrefix: string): string[] {
  return labelledLeftovers().filter((l) => l.includes(rolloutKeyPrefix.toLowerCase()));
}
