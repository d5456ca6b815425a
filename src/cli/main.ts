#!/usr/bin/env node
// A CLI user reads tables and progress lines; per-node JSON logs only when asked (SAASBENCH_LOG_LEVEL).
if (!process.env.SAASBENCH_LOG_LEVEL && !process.argv.includes('worker')) process.env.SAASBENCH_LOG_LEVEL = 'warn';
import { Command, Option } from 'commander';
import { InvalidInputError } from '../errors';
import { agentNames } from '../agents/factory';
import { ensureDevServer, stopDevServer } from '../temporal/dev-server';
import { startWorker } from '../worker/worker';
import { formatCommanderError, intFlag, positiveFlag } from './options';
import { runRollout } from './run';
import { validateTaskCommand } from './tasks-validate';
import { importTaskCommand } from './tasks-import';
import { dryRunCommand } from './tasks-dry-run';
import { buildTaskImages, standinsCommand } from './images';
import { tasksCheckCommand } from './tasks-check';
import { collect } from './preflight';
import { cleanCommand } from './clean';
import { rescoreCommand } from './rescore';
import { temporalTarget } from './temporal-target';
import { repoRoot } from '../paths';
import { join } from 'node:path';
import { stopCommand, sweepCommand } from './sweep';
import { watchCommand } from './watch';
import { reportCommand } from './report';
import { registerBenchmarkCommands } from './benchmark';
import { exitCodeOf, formatCliError } from './follow';

const program = new Command('saasbench')
  .description('Evaluate coding agents on long SaaS engineering tasks, as durable Temporal workflows')
  .showHelpAfterError('(saasbench <command> --help shows the options)')
  .configureOutput({ outputError: (s, write) => write(`saasbench: ${formatCommanderError(s)}`) });

const exitWith = (p: Promise<number> | number) =>
  Promise.resolve(p).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(formatCliError(err));
      process.exit(exitCodeOf(err));
    },
  );

program
  .command('server')
  .description('start the embedded Temporal dev server (temporal-dev.yml) in the background, or stop it')
  .option('--stop', 'stop the dev server started by saasbench')
  .action((o: { stop?: boolean }) =>
    exitWith(
      (async () => {
        if (o.stop) {
          const r = await stopDevServer();
          process.stdout.write(`${JSON.stringify(r)}\n`);
          return 0;
        }
        const h = await ensureDevServer();
        process.stdout.write(h.external ? `using TEMPORAL_ADDRESS=${h.address}\n` : `Temporal dev server ${h.started ? 'started' : 'already running'} at ${h.address}; UI ${h.uiUrl}; db ${h.dbFile}\n`);
        return 0;
      })(),
    ),
  );

program
  .command('worker')
  .description('run a worker host: polls the shared queue and its own host queue until interrupted')
  .option('--host-id <id>', 'this Docker host\'s id (default: SAASBENCH_HOST_ID or the hostname)')
  .action((o: { hostId?: string }) =>
    exitWith(
      (async () => {
        const target = await temporalTarget();
        const w = await startWorker({ address: target.address, namespace: target.namespace, hostId: o.hostId });
        process.stderr.write(`worker ${w.hostId} polling ${w.sharedQueue} and ${w.hostQueue} (Ctrl-C to stop)\n`);
        await w.done;
        return 0;
      })(),
    ),
  );

const runCmd = (name: string, description: string, defaults: { task?: string; agent?: string }) =>
  program
    .command(name)
    .description(description)
    .addOption(new Option('--task <dir>', 'task folder (native or published SaaSBench layout)').default(defaults.task))
    .addOption(new Option('--agent <name>', `agent: ${agentNames().join(', ')}`).default(defaults.agent))
    .option('--model <id>', 'model id passed to the agent', 'none')
    .option('--repeat <n>', 'repeat index (part of the rollout id)', intFlag('--repeat', 0, 10_000), 0)
    .option('--sweep <name>', 'sweep name (part of the rollout id; default run-<timestamp>)')
    .option('--parallelism <n>', "DAG nodes evaluated at once (default: the task's — 1, in the published order, unless it declares parallel evaluation safe)", intFlag('--parallelism', 1, 64))
    .option('--budget <seconds>', 'agent wall-clock budget', positiveFlag('--budget'), 10_800)
    .option('--idle <seconds>', 'stop the agent after this long without output', positiveFlag('--idle'), 1_800)
    .option('--no-judge', 'disable the LLM judge (llm-judge nodes become SKIPPED_LLM)')
    .option('--no-worker', 'do not run an in-process worker (use workers started with `saasbench worker`)')
    .option('--json', 'print the score as JSON')
    .option('--dry-run', 'start nothing: walk the DAG, every node DRY_RUN (as `saasbench tasks dry-run`)')
    .option('--image-map <from=to>', 'rewrite an image reference of the stack (repeatable; `repo:*` = any tag; docs/operations.md)', collect, [])
    .option('--skip-preflight', 'do not check the stack\'s images on this host before starting (workers on other hosts still do)')
    .action((o) =>
      exitWith(
        (async () => {
          if (!o.task) throw InvalidInputError.one('command line', '--task', 'required: the task folder to run');
          if (o.dryRun) return dryRunCommand(o.task, { json: o.json });
          if (!o.agent) throw InvalidInputError.one('command line', '--agent', `required: one of ${agentNames().join(', ')}`);
          if (!agentNames().includes(o.agent)) throw InvalidInputError.one('command line', '--agent', `unknown agent "${o.agent}" (known: ${agentNames().join(', ')})`);
          return runRollout({ ...o, budget: o.budget, idle: o.idle });
        })(),
      ),
    );

runCmd('run', 'run one rollout of a task with an agent and print its score table', {});
runCmd('demo', 'run the sample task tasks/helpdesk with the oracle agent', { task: join(repoRoot(), 'tasks', 'helpdesk'), agent: 'oracle' });

program
  .command('sweep <file>')
  .description('run a sweep (tasks × agents × models × repeats, a .yaml or .json file): start it, or attach to the running sweep of that name; follow it; print the leaderboard')
  .option('--no-worker', 'do not run an in-process worker (use workers started with `saasbench worker`)')
  .option('--detach', 'start the sweep and return (follow it with `saasbench watch <name>`)')
  .option('--json', 'print the benchmark (leaderboard, per backbone/category/task) as JSON')
  .option('--skip-preflight', 'do not check the tasks\' images on this host before starting')
  .option('--as-paper', "the paper's view of the leaderboard: a declared task without a scored rollout scores 0 (mean over all declared tasks)")
  .option('--cost-cap <usd>', 'start no new rollout once the finished ones cost this much (gateway-metered; overrides costCapUsd of the file)', positiveFlag('--cost-cap'))
  .action((file: string, o: { worker: boolean; detach?: boolean; json?: boolean; skipPreflight?: boolean; asPaper?: boolean; costCap?: number }) => exitWith(sweepCommand(file, o)));

program
  .command('watch <sweep>')
  .description('live progress of a sweep (name or sweep/<name>): per-rollout phase, nodes evaluated, ETA; the leaderboard at the end')
  .option('--once', 'print one snapshot and exit')
  .option('--interval <seconds>', 'refresh interval', positiveFlag('--interval'), 2)
  .option('--as-paper', "the paper's view of the leaderboard: a declared task without a scored rollout scores 0 (mean over all declared tasks)")
  .action((sweep: string, o: { once?: boolean; interval?: number; asPaper?: boolean }) => exitWith(watchCommand(sweep, o)));

program
  .command('stop <sweep>')
  .description('stop a sweep gracefully: start no new rollouts, let running ones finish (or --cancel-running), write the report')
  .option('--cancel-running', 'cancel the running rollouts too (each tears down its containers)')
  .action((sweep: string, o: { cancelRunning?: boolean }) => exitWith(stopCommand(sweep, o)));

program
  .command('report <target>')
  .description('(re)write HTML/Markdown/CSV/JSONL reports: a run folder, a sweep folder, or a sweep name (fetched from Temporal)')
  .option('--as-paper', "a sweep's report in the paper's view (a declared task without a scored rollout scores 0), written to <sweep folder>/as-paper/")
  .action((target: string, o: { asPaper?: boolean }) => exitWith(reportCommand(target, o)));

const tasks = program.command('tasks').description('task folders');
tasks
  .command('validate <dir>')
  .description('check a task folder (native or published layout) and show what it holds')
  .action((dir: string) => exitWith(validateTaskCommand(dir)));
tasks
  .command('dry-run <dir>')
  .description('walk the DAG without running anything: every node DRY_RUN, placeholders resolved as far as the variables go, the rest named with their source')
  .option('--node <id>', 'show one node\'s resolved steps')
  .option('--json', 'print the dry run as JSON')
  .option('--out <file>', 'also write the dry run as JSON to a file')
  .action((dir: string, o: { node?: string; json?: boolean; out?: string }) => exitWith(dryRunCommand(dir, o)));
tasks
  .command('check <dir>')
  .description('can this host run the task\'s stack: each image (after .env, build args and the image map) present, buildable (from which base) or to be pulled; the compose keys in use')
  .option('--image-map <from=to>', 'rewrite an image reference (repeatable; `repo:*` = any tag)', collect, [])
  .option('--offline', 'do not ask a registry about absent images')
  .option('--json', 'print the plan as JSON')
  .action((dir: string, o: { imageMap: string[]; offline?: boolean; json?: boolean }) => exitWith(tasksCheckCommand(dir, o)));
tasks
  .command('import <dir>')
  .description('write a native task folder (task.yaml, environment/, evaluation/) from a published SaaSBench task folder')
  .requiredOption('--out <dir>', 'the native task folder to write')
  .option('--roles <file>', 'a YAML file declaring how each role obtains credentials (docs/compatibility.md#auth)')
  .option('--dag <file>', 'which DAG of the evaluate folder (default: dag_smoke.json if present, else dag.json)')
  .option('--id <id>', 'task id (default: the published one)')
  .option('--force', 'write into a non-empty output folder')
  .action((dir: string, o: { out: string; roles?: string; dag?: string; id?: string; force?: boolean }) => exitWith(importTaskCommand(dir, { out: o.out, rolesFile: o.roles, dag: o.dag, id: o.id, force: o.force })));

registerBenchmarkCommands(program, exitWith);

const images = program.command('images').description('container images of tasks');
images
  .command('build <dir>')
  .description('build the images a task\'s stack needs (skipped when up to date)')
  .option('--image-map <from=to>', 'rewrite an image reference (repeatable; `repo:*` = any tag)', collect, [])
  .action((dir: string, o: { imageMap: string[] }) => exitWith(buildTaskImages(dir, o)));
images
  .command('standins [names...]')
  .description('build local stand-ins (postgres, redis, dev) for the images published stacks pull, FROM saasbench/base:bookworm; print the --image-map to use')
  .option('--json', 'print the stand-ins and the image map as JSON')
  .action((names: string[], o: { json?: boolean }) => exitWith(standinsCommand(names ?? [], o)));

program
  .command('rescore <rollout-or-sweep>')
  .description('re-evaluate a finished rollout (or every rollout of a sweep) on its preserved workspace: the nodes changed since the last scoring; report lock and status changes')
  .option('--json', 'print the changes as JSON')
  .option('--full', 're-evaluate every node, not only what changed')
  .action((rollout: string, o: { json?: boolean; full?: boolean }) => exitWith(rescoreCommand(rollout, o)));

program
  .command('clean')
  .description('remove labelled containers, networks and volumes of rollouts that are not running')
  .option('--all', 'remove every saasbench-labelled resource without asking Temporal')
  .action((o: { all?: boolean }) => exitWith(cleanCommand({ all: !!o.all })));

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(formatCliError(err));
  process.exit(2);
});
