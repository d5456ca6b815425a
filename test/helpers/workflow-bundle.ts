import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { repoRoot } from '../../src/paths';

const quiet = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []));
}

/**
 * The workflow bundle for tests, built once per version of the compiled code and shared by every
 * test file (bundling is most of a workflow test file's cost, and the files run in parallel): the
 * first process to need it builds it under a lock file, the others wait for it. The key hashes all
 * of dist/src, so any change to code the workflows import makes a new bundle.
 */
export async function testWorkflowBundle(): Promise<WorkflowBundle> {
  const root = repoRoot();
  const h = createHash('sha256');
  for (const f of jsFiles(join(root, 'dist', 'src')).sort()) h.update(f).update(readFileSync(f));
  const dir = join(root, 'dist', '.cache');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `workflow-bundle-${h.digest('hex').slice(0, 16)}.js`);
  const lock = `${file}.lock`;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    if (existsSync(file)) return { code: readFileSync(file, 'utf8') };
    let fd: number | undefined;
    try {
      fd = openSync(lock, 'wx');
    } catch {
      // another test file is bundling; a lock older than two minutes is a crashed one's
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { force: true });
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../src/workflows'), logger: quiet });
      writeFileSync(`${file}.tmp`, bundle.code);
      renameSync(`${file}.tmp`, file);
      // older versions' bundles are never read again
      for (const old of readdirSync(dir)) if (old.startsWith('workflow-bundle-') && old.endsWith('.js') && join(dir, old) !== file) rmSync(join(dir, old), { force: true });
      return bundle;
    } finally {
      closeSync(fd);
      rmSync(lock, { force: true });
    }
  }
  throw new Error(`timed out waiting for ${lock}`);
}
