import type { Command } from 'commander';
import { defaultBenchmarkDir, pullBenchmark, PULL_DEFAULTS } from '../benchmark/pull';
import { PullError } from '../benchmark/pull-error';
import { benchmarkStatsCommand } from './benchmark-stats';
import { dialectRows, renderSpellingsMarkdown, writeSpellingsInto } from '../benchmark/dialects';
import { join } from 'node:path';
import { repoRoot } from '../paths';

/**
 * The `saasbench benchmark …` command group: the published SaaSBench benchmark as data. Each
 * subcommand registers itself on the group this returns (add new ones beside `pull`).
 */
export function registerBenchmarkCommands(program: Command, exitWith: (p: Promise<number>) => unknown): Command {
  const group = program.command('benchmark').description('the published SaaSBench benchmark (tasks from its git repository, inputs from its Hugging Face dataset)');
  group
    .command('pull')
    .description('fetch the published tasks at a pinned commit, with their PRD and knowledge base, into <dir>/task_<id> (verified, atomic, idempotent)')
    .option('--dir <dir>', 'where the task folders and saasbench-pull.json go', defaultBenchmarkDir())
    .option('--tasks <ids>', 'comma-separated task ids (default: every task at the commit)')
    .option('--repo <url>', 'git repository of the published benchmark', PULL_DEFAULTS.repo)
    .option('--commit <sha>', 'the pinned commit (full sha)', PULL_DEFAULTS.commit)
    .option('--dataset <repo>', 'Hugging Face dataset with each task\'s task.md and knowledge_base.json', PULL_DEFAULTS.dataset)
    .option('--revision <rev>', 'dataset branch, tag or commit (recorded as the commit it resolves to)', PULL_DEFAULTS.revision)
    .action((o: PullFlags) => {
      exitWith(benchmarkPullCommand(o));
    });
  group
    .command('stats <dir>')
    .description("count a benchmark folder as the paper's table does: per task and in total nodes, maxScore, llm-judge nodes, backbone shares, unreachable maxScore — beside the paper's figures")
    .option('--json', 'print the numbers as JSON')
    .action((dir: string, o: { json?: boolean }) => {
      exitWith(Promise.resolve(benchmarkStatsCommand(dir, o)));
    });
  group
    .command('dialects <dirs...>')
    .description('the published spellings the loader maps onto canonical inputs, with the tasks that use each (the table of docs/compatibility.md)')
    .option('--write-docs', 'rewrite the generated table in docs/compatibility.md')
    .action((dirs: string[], o: { writeDocs?: boolean }) => {
      const rows = dialectRows(dirs);
      if (o.writeDocs) writeSpellingsInto(join(repoRoot(), 'docs', 'compatibility.md'), rows);
      else process.stdout.write(renderSpellingsMarkdown(rows));
      exitWith(Promise.resolve(0));
    });
  return group;
}

interface PullFlags {
  dir: string;
  tasks?: string;
  repo: string;
  commit: string;
  dataset: string;
  revision: string;
}

/** Progress on stderr; a failure is one line `saasbench: <what>: <cause>` and exit code 1. HF_TOKEN is only ever sent, never shown. */
export async function benchmarkPullCommand(o: PullFlags, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  try {
    const endpoint = (process.env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]+/.test(endpoint)) throw new PullError('HF_ENDPOINT', `"${endpoint}" is not an http(s) URL`);
    await pullBenchmark({
      dir: o.dir,
      tasks: o.tasks === undefined ? undefined : o.tasks.split(','),
      repo: o.repo,
      commit: o.commit,
      dataset: o.dataset,
      revision: o.revision,
      hf: { endpoint, token: process.env.HF_TOKEN || undefined },
      log: (line) => err.write(`${line}\n`),
    });
    return 0;
  } catch (e) {
    if (!(e instanceof PullError)) throw e;
    err.write(`saasbench: ${e.message}\n`);
    return 1;
  }
}
