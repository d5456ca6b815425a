import type { DatabaseTarget } from '../model/database';
import type { SandboxBackend } from '../sandbox/backend';

/**
 * Logical dumps of the stack's databases, taken and restored inside their own containers with the
 * engine's own tools. A dump, not the volume: a file copy of a running server is not consistent.
 * ClickHouse has no dump tool in its image; its data is not snapshotted (docs/operations.md).
 */
type Dumper = { dump: string; restore: string; env: Record<string, string> };

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function dumperOf(db: DatabaseTarget): Dumper | null {
  switch (db.kind) {
    case 'postgres':
      return {
        dump: `pg_dump -h 127.0.0.1 -p ${db.port} -U ${q(db.user)} -d ${q(db.name)} --clean --if-exists --no-owner`,
        restore: `psql -q -h 127.0.0.1 -p ${db.port} -U ${q(db.user)} -d ${q(db.name)} >/dev/null`,
        env: { PGPASSWORD: db.password },
      };
    case 'mysql': {
      const tool = (t: string) => `$(command -v ${t} || command -v ${t.replace('mysql', 'mariadb')})`;
      return {
        dump: `${tool('mysqldump')} -h 127.0.0.1 -P ${db.port} -u ${q(db.user)} --single-transaction --add-drop-table ${q(db.name)}`,
        restore: `${tool('mysql')} -h 127.0.0.1 -P ${db.port} -u ${q(db.user)} ${q(db.name)}`,
        env: { MYSQL_PWD: db.password },
      };
    }
    case 'mongodb': {
      const auth = db.user ? ` -u ${q(db.user)} -p "$MONGO_PW" --authenticationDatabase ${q(db.auth_source)}` : '';
      return { dump: `mongodump --quiet --port ${db.port}${auth} --db ${q(db.name)} --archive`, restore: `mongorestore --quiet --port ${db.port}${auth} --drop --archive`, env: { MONGO_PW: db.password } };
    }
    default:
      return null;
  }
}

/** The task's databases, each once (the default one and the named ones). */
export function databasesOf(env: { database?: DatabaseTarget; databases?: Record<string, DatabaseTarget> }): DatabaseTarget[] {
  const all = [...(env.database ? [env.database] : []), ...Object.values(env.databases ?? {})];
  const seen = new Set<string>();
  return all.filter((d) => {
    const k = `${d.kind}/${d.service}/${d.name}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

export const dumpName = (db: DatabaseTarget) => `db-${db.service}-${db.name}.gz`.replace(/[^A-Za-z0-9_.-]/g, '-');

/** A gzipped dump, or null when the engine has no dump tool here. One exec: the dump comes back on its stdout. */
export async function dumpDatabase(sandbox: SandboxBackend, container: string, db: DatabaseTarget): Promise<Buffer | null> {
  const d = dumperOf(db);
  if (!d) return null;
  const r = await sandbox.execBytes(container, ['bash', '-c', `set -o pipefail; ${d.dump} | gzip`], { timeoutMs: 600_000, env: d.env });
  if (r.exitCode !== 0) throw new Error(`${db.kind} dump of ${db.name} failed: ${(r.stderr || `exit ${r.exitCode}`).slice(0, 400)}`);
  return r.stdout;
}

export async function restoreDatabase(sandbox: SandboxBackend, container: string, db: DatabaseTarget, dump: Buffer): Promise<void> {
  const d = dumperOf(db);
  if (!d) return;
  await sandbox.writeFiles(container, '/tmp', [{ path: '.saasbench-restore-db.gz', content: dump }]);
  const r = await sandbox.exec(container, ['bash', '-c', `set -o pipefail; gunzip -c /tmp/.saasbench-restore-db.gz | ${d.restore}; s=$?; rm -f /tmp/.saasbench-restore-db.gz; echo $s`], { timeoutMs: 600_000, env: d.env });
  if (r.stdout.trim().split('\n').pop() !== '0') throw new Error(`${db.kind} restore of ${db.name} failed: ${(r.stderr || r.stdout).slice(0, 400)}`);
}
