import { mkdirSync, renameSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { redact } from '../log';

/** Write via a temp file + rename so a crash never leaves a half-written result behind. */
export function writeAtomic(file: string, content: string | Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, typeof content === 'string' ? redact(content) : content);
  renameSync(tmp, file);
}

export function writeJson(file: string, value: unknown): void {
  writeAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

export function readJsonIfExists<T>(file: string): T | null {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
}

/** Node ids may contain characters that are awkward in file names. */
export function nodeFileName(nodeId: string): string {
  return `${nodeId.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`;
}
