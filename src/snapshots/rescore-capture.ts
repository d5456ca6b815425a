import { join } from 'node:path';
import type { DatabaseTarget } from '../model/database';
import type { SandboxBackend } from '../sandbox/backend';
import { writeAtomic, writeJson } from '../runs/files';
import { dumpDatabase } from './db-dump';
import { archiveIn } from './rollout-snapshot';

/**
 * What the run folder keeps of the agent's work for `saasbench rescore` (src/evaluation/rescore.ts):
 *   workspace.tar.gz  the workspace without dependency and cache folders (large, reproducible, and
 *                     not the agent's work; the snapshot store keeps them for a resume)
 *   processes.json    the processes the agent left running (command line and working directory)
 *   database.sql.gz   a logical dump of the task's database as the agent left it, before
 *                     evaluation writes anything (a file copy of a live server is not consistent)
 */
export const SNAPSHOT_EXCLUDES = ['node_modules', 'vendor', '__pycache__', '*.pyc', '.pnpm-store', '.yarn', '.npm', '.turbo', '.next', '.nuxt', '.svelte-kit', '.cache', '.git', '.idea', '.vscode', 'target', 'dist', 'build', '.venv', 'venv'];

export interface ProcessRecord {
  pid: number;
  cwd: string;
  args: string[];
}

const WS = 'workspace.tar.gz';
const PS = 'processes.tsv';

/**
 * The archive scripts (archiveIn) of the app container: the final snapshot takes them in its own
 * exec. The process list comes after tar, so tar itself is not in it.
 */
export function rescoreArchives(workspace: string): Record<string, string> {
  const excludes = SNAPSHOT_EXCLUDES.map((e) => `--exclude='${e}'`).join(' ');
  // builtins only where bash has them (4.4+: mapfile -d): a tr and a readlink per process were
  // ~2 ms each (bench/sweep-overhead.ts); the subshell keeps the cd and IFS to itself
  const fast = 'IFS=$\'\\037\'; for p in /proc/[0-9]*; do pid=${p#/proc/}; [ "$pid" = 1 ] && continue; [ "$pid" = "$$" ] && continue; mapfile -d "" -t a < $p/cmdline 2>/dev/null || continue; [ ${#a[@]} -gt 0 ] || continue; cd -P $p/cwd 2>/dev/null && w=$PWD || w=; c="${a[*]}"; printf "%s\\t%s\\t%s\\n" "$pid" "$w" "${c//$\'\\n\'/$\'\\036\'}"; done';
  const slow = 'for p in /proc/[0-9]*; do pid=${p#/proc/}; [ "$pid" = 1 ] && continue; [ "$pid" = "$$" ] && continue; c=$(tr "\\0\\n" "\\037\\036" < $p/cmdline 2>/dev/null); [ -n "$c" ] && printf "%s\\t%s\\t%s\\n" "$pid" "$(readlink $p/cwd)" "$c"; done';
  const list = `if mapfile -d "" -t a < /dev/null 2>/dev/null; then (${fast}); else ${slow}; fi`;
  return { [WS]: `tar -C '${workspace}' ${excludes} -czf $OUT . 2>/dev/null`, [PS]: `{ ${list}; } > $OUT; true` };
}

/** Write what rescoreArchives produced into the run folder. */
export function keepForRescore(runDir: string, out: Record<string, Buffer>): { bytes: number; processes: number } {
  writeAtomic(join(runDir, WS), out[WS]);
  const processes: ProcessRecord[] = (out[PS]?.toString('utf8') ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [pid, cwd, cmd] = l.split('\t');
      // arguments are \x1f-separated, their newlines sent as \x1e (one line per process)
      return { pid: Number(pid), cwd, args: (cmd ?? '').split('\x1f').filter(Boolean).map((a) => a.replaceAll('\x1e', '\n')) };
    })
    // the harness's own helpers (execDetached's runner too) and the container's idle command are not the agent's
    .filter((p) => !p.args.join(' ').includes('/tmp/.saasbench') && p.args[1] !== './runner.sh' && !['sleep', 'tr', 'readlink', 'tar', 'gzip'].includes(p.args[0]));
  writeJson(join(runDir, 'processes.json'), processes);
  return { bytes: out[WS].length, processes: processes.length };
}

/** The same without a snapshot (snapshots off, or the final one failed): one exec of its own. */
export async function captureForRescore(sandbox: SandboxBackend, container: string, workspace: string, runDir: string): Promise<{ bytes: number; processes: number }> {
  return keepForRescore(runDir, await archiveIn(sandbox, container, rescoreArchives(workspace)));
}

export const keepDatabaseDump = (runDir: string, dump: Buffer): void => writeAtomic(join(runDir, 'database.sql.gz'), dump);

/** The task's database dumped for re-scoring, when no snapshot dumped it already. */
export async function captureDatabase(sandbox: SandboxBackend, container: string, db: DatabaseTarget, runDir: string): Promise<void> {
  const dump = await dumpDatabase(sandbox, container, db);
  if (dump) keepDatabaseDump(runDir, dump);
}
