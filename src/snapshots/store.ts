import { mkdirSync, readdirSync, readFileSync, existsSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { writeAtomic } from '../runs/files';

/**
 * Where rollout snapshots live: flat object keys (`<rolloutKey>/<seq>/<part>`), so a directory and
 * any S3-compatible object store implement it alike. Pick one with snapshotStore() (factory.ts).
 */
export interface SnapshotStore {
  /** 'dir' or 's3': recorded in logs and snapshot metadata */
  readonly kind: string;
  /** where, for people (a folder or s3://bucket/prefix) */
  readonly location: string;
  put(key: string, body: Buffer): Promise<void>;
  /** null when the key does not exist */
  get(key: string): Promise<Buffer | null>;
  /** every key under `prefix` (a folder-like prefix ending in '/'), sorted */
  list(prefix: string): Promise<string[]>;
  /** delete these keys; missing ones are no error */
  remove(keys: string[]): Promise<void>;
}

/** The default store: a folder on the worker host (shared storage makes it reachable from every host). */
export class DirSnapshotStore implements SnapshotStore {
  readonly kind = 'dir';
  constructor(readonly location: string) {}

  async put(key: string, body: Buffer): Promise<void> {
    const file = this.fileOf(key);
    mkdirSync(dirname(file), { recursive: true });
    writeAtomic(file, body);
  }

  async get(key: string): Promise<Buffer | null> {
    const file = this.fileOf(key);
    return existsSync(file) ? readFileSync(file) : null;
  }

  async list(prefix: string): Promise<string[]> {
    const root = this.fileOf(prefix.replace(/\/$/, '') || '.');
    if (!existsSync(root)) return [];
    const out: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d)) {
        const p = join(d, e);
        if (statSync(p).isDirectory()) walk(p);
        else if (!e.includes('.tmp-')) out.push(relative(this.location, p).split(sep).join('/'));
      }
    };
    walk(root);
    return out.sort();
  }

  async remove(keys: string[]): Promise<void> {
    for (const k of keys) {
      const file = this.fileOf(k);
      rmSync(file, { force: true });
      // empty folders left by the removal go too (never the store's own folder)
      for (let d = dirname(file); d.startsWith(this.location + sep) && existsSync(d) && readdirSync(d).length === 0; d = dirname(d)) rmdirSync(d);
    }
  }

  private fileOf(key: string): string {
    if (key.split('/').some((s) => s === '..')) throw new Error(`snapshot key "${key}" leaves the store`);
    return join(this.location, ...key.split('/'));
  }
}
