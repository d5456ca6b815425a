import { formatIssue } from '../errors';
import { buildImages, loadCompose } from '../sandbox';
import { loadAnyTask } from '../tasks/load';

/** Build (or confirm up to date) every image a task's stack needs. */
export async function buildTaskImages(dir: string): Promise<number> {
  const { task, issues } = loadAnyTask(dir);
  if (!task) {
    for (const i of issues) process.stderr.write(`${formatIssue(i)}\n`);
    return 2;
  }
  const project = loadCompose(task.environment.composeFile, { envFileFallbacks: task.environment.envFileFallbacks });
  let built = false;
  const images = await buildImages(project, task.id, {
    onProgress: (line) => {
      if (line.endsWith('already built')) return;
      if (!built) process.stderr.write(`building images of task ${task.id} (first time only)\n`);
      built = true;
      if (process.env.SAASBENCH_VERBOSE) process.stderr.write(line.endsWith('\n') ? line : `${line}\n`);
    },
  });
  if (built) for (const [svc, ref] of Object.entries(images)) process.stderr.write(`  ${svc}: ${ref}\n`);
  return 0;
}
