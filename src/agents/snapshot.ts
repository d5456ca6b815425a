import { join } from 'node:path';
import type { SandboxBackend } from '../sandbox/backend';
import { writeAtomic, writeJson } from '../runs/files';

/** Dependency and cache folders: large, reproducible, and not the agent's work. */
export const SNAPSHOT_EXCLUDES = ['node_modules', 'vendor', '__pycache__', '*.pyc', '.pnpm-store', '.yarn', '.npm', '.turbo', '.next', '.nuxt', '.svelte-kit', '.cache', '.git', '.idea', '.vscode', 'target', 'dist', 'build', '.venv', 'venv'];

export interface ProcessRecord {
  pid: number;
  cwd: string;
  args: string[];
}

/**
 * Keep what the agent left: the workspace (without dependency folders) as workspace.tar.gz and the
 * processes it left running (command line and working directory), so a score can be audited and
 * re-computed later (`saasbench rescore`).
 */
export async function snapshotWorkspace(sandbox: SandboxBackend, container: string, workspace: string, runDir: string): Promise<{ bytes: number; processes: number }> {
  const excludes = SNAPSHOT_EXCLUDES.map((e) => `--exclude='${e}'`).join(' ');
  const tmp = '/tmp/.saasbench/workspace-snapshot.tar.gz';
  // tar and the process list in one exec (each exec is ~3 Docker API calls and a spawn: bench/sweep-overhead.ts);
  // the list is taken after tar, so tar itself is not in it
  const list = 'for p in /proc/[0-9]*; do pid=${p#/proc/}; [ "$pid" = 1 ] && continue; [ "$pid" = "$$" ] && continue; c=$(tr "\\0" "\\037" < $p/cmdline 2>/dev/null); [ -n "$c" ] && printf "%s\\t%s\\t%s\\n" "$pid" "$(readlink $p/cwd)" "$c"; done';
  const ps = await sandbox.exec(container, ['bash', '-c', `mkdir -p /tmp/.saasbench && tar -C '${workspace}' ${excludes} -czf ${tmp} . 2>/dev/null; ${list}`], { timeoutMs: 300_000 });
  const tarball = await sandbox.readFile(container, tmp);
  if (tarball) writeAtomic(join(runDir, 'workspace.tar.gz'), tarball);
  await sandbox.exec(container, ['rm', '-f', tmp]);
  const processes: ProcessRecord[] = ps.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [pid, cwd, cmd] = l.split('\t');
      return { pid: Number(pid), cwd, args: cmd.split('\x1f').filter(Boolean) };
    })
    // the harness's own helpers and the container's idle command are not the agent's
    .filter((p) => !p.args.join(' ').includes('/tmp/.saasbench/') && !['sleep', 'tr', 'readlink'].includes(p.args[0]));
  writeJson(join(runDir, 'processes.json'), processes);
  return { bytes: tarball?.length ?? 0, processes: processes.length };
}

/**
 * A consistent dump of the task's PostgreSQL database as the agent left it (before evaluation
 * writes anything), for re-scoring. Data directories of a live server are not copied: a file-level
 * copy of a running PostgreSQL is not guaranteed to be consistent; pg_dump is.
 */
export async function snapshotDatabase(sandbox: SandboxBackend, dbContainer: string, db: { user: string; password: string; port: number; name: string }, runDir: string): Promise<number> {
  const tmp = '/tmp/.saasbench-db.sql.gz';
  const r = await sandbox.exec(dbContainer, ['bash', '-c', `pg_dump -h 127.0.0.1 -p ${db.port} -U '${db.user}' -d '${db.name}' --clean --if-exists --no-owner | gzip > ${tmp}; echo \${PIPESTATUS[0]}`], { timeoutMs: 600_000, env: { PGPASSWORD: db.password } });
  if (r.stdout.trim() !== '0') throw new Error(`pg_dump failed: ${r.stderr || r.stdout}`);
  const dump = await sandbox.readFile(dbContainer, tmp);
  await sandbox.exec(dbContainer, ['rm', '-f', tmp]);
  if (dump) writeAtomic(join(runDir, 'database.sql.gz'), dump);
  return dump?.length ?? 0;
}
