import { formatIssue } from '../errors';
import { buildImages, imageExists } from '../sandbox';
import { STANDINS, buildStandin, standinImageMap } from '../sandbox/standins';
import { loadAnyTask } from '../tasks/load';
import { loadTaskCompose } from '../tasks/task-compose';
import { repoRoot } from '../paths';
import { InvalidInputError } from '../errors';
import { envImageMap, imageMapFlags } from './preflight';

/** Build (or confirm up to date) every image a task's stack needs. */
export async function buildTaskImages(dir: string, o: { imageMap?: string[] } = {}): Promise<number> {
  const { task, issues } = loadAnyTask(dir);
  if (!task) {
    for (const i of issues) process.stderr.write(`${formatIssue(i)}\n`);
    return 2;
  }
  const project = loadTaskCompose(task);
  let built = false;
  const images = await buildImages(project, task.id, {
    imageMap: { ...envImageMap(), ...imageMapFlags(o.imageMap) },
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

/**
 * `saasbench images standins [names…]`: build the local stand-ins (all, or the named ones) and
 * print the image map that points the published images at them. Quiet when already built.
 */
export async function standinsCommand(names: string[], o: { json?: boolean } = {}): Promise<number> {
  const known = STANDINS.map((s) => s.name);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) throw InvalidInputError.one('command line', '<names>', `unknown stand-in "${unknown[0]}" (known: ${known.join(', ')})`);
  const wanted = STANDINS.filter((s) => names.length === 0 || names.includes(s.name));
  if (!(await imageExists('saasbench/base:bookworm'))) {
    throw InvalidInputError.one('docker', 'saasbench/base:bookworm', 'the stand-ins build FROM the base image, which is absent: run scripts/setup.sh (or `npm test`/`npm run demo`) first');
  }
  const root = repoRoot();
  const results: { name: string; tag: string; contentTag: string; built: boolean }[] = [];
  for (const s of wanted) {
    let announced = false;
    const r = await buildStandin(root, s, (line) => {
      if (line.endsWith('already built')) return;
      if (!announced) process.stderr.write(`building stand-in ${s.name} (${s.tag}); takes a few minutes the first time\n`);
      announced = true;
      if (process.env.SAASBENCH_VERBOSE) process.stderr.write(`${line}\n`);
    });
    results.push({ name: s.name, tag: s.tag, contentTag: r.contentTag, built: r.built });
  }
  const map = standinImageMap(wanted.map((s) => s.name));
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ standins: results, imageMap: map }, null, 2)}\n`);
    return 0;
  }
  for (const s of wanted) process.stdout.write(`${s.tag}: stands in for ${s.replaces.join(', ')} — ${s.caveat}\n`);
  const flags = Object.entries(map).map(([f, t]) => `--image-map '${f}=${t}'`);
  process.stdout.write(`\nimage map (flags for run / tasks check):\n  ${flags.join(' \\\n  ')}\n`);
  process.stdout.write(`for workers: SAASBENCH_IMAGE_MAP='${Object.entries(map).map(([f, t]) => `${f}=${t}`).join(',')}'\n`);
  process.stdout.write(`in a sweep file:\nimageMap:\n${Object.entries(map).map(([f, t]) => `  "${f}": ${t}`).join('\n')}\n`);
  return 0;
}
