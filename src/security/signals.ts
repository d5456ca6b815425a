import type { SandboxBackend } from '../sandbox/backend';

/** What the kernel says the limits did to the agent's container (cgroup v1 or v2 counters). */
export interface LimitSignals {
  /** processes the memory limit's OOM killer ended */
  oomKills: number;
  /** forks refused because the pids limit was reached */
  pidsLimitHits: number;
  /** the largest memory use seen, bytes (null when the kernel does not say) */
  memoryPeakBytes: number | null;
}

/**
 * Read the container's own cgroup counters (mounted read-only inside it, so the agent cannot reset
 * them). Best effort: null when nothing could be read.
 */
export async function limitSignals(sandbox: SandboxBackend, container: string): Promise<LimitSignals | null> {
  const files = [
    '/sys/fs/cgroup/memory/memory.oom_control',
    '/sys/fs/cgroup/memory/memory.max_usage_in_bytes',
    '/sys/fs/cgroup/pids/pids.events',
    '/sys/fs/cgroup/memory.events',
    '/sys/fs/cgroup/memory.peak',
    '/sys/fs/cgroup/pids.events',
  ];
  const script = files.map((f) => `[ -r ${f} ] && sed 's|^|${f} |' ${f}`).join('; ') + '; true';
  const r = await sandbox.exec(container, ['sh', '-c', script], { timeoutMs: 15_000 }).catch(() => null);
  if (!r || r.exitCode !== 0 || !r.stdout.trim()) return null;
  let oomKills = 0;
  let pidsLimitHits = 0;
  let peak: number | null = null;
  for (const line of r.stdout.split('\n')) {
    const [file, ...rest] = line.trim().split(/\s+/);
    if (!file) continue;
    const [k, v] = rest.length === 2 ? rest : [null, rest[0]];
    const n = Number(v);
    if (!Number.isFinite(n)) continue;
    if ((file.endsWith('memory.oom_control') || file.endsWith('memory.events')) && k === 'oom_kill') oomKills = Math.max(oomKills, n);
    else if (file.endsWith('pids.events') && k === 'max') pidsLimitHits = Math.max(pidsLimitHits, n);
    else if (file.endsWith('max_usage_in_bytes') || file.endsWith('memory.peak')) peak = Math.max(peak ?? 0, n);
  }
  return { oomKills, pidsLimitHits, memoryPeakBytes: peak };
}
