/**
 * The delivery log embedded in the indexer: PGlite (PostgreSQL compiled to WebAssembly) on
 * a data directory. It runs in this process and serves one connection, which is why the
 * indexer is the only process that opens the database and serves the read API itself
 * (pglite-socket's multiplexer, which would let other processes in, breaks node-postgres's
 * extended protocol: "portal does not exist").
 *
 * PGlite runs one statement at a time; a transaction holds it, so reads wait for the
 * writer's transaction to finish, as they would for a lock.
 */
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import type { SqlClient, SqlExecutor, SqlResult } from './client.js';

interface PGliteQueryable {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
}

function executor(db: PGliteQueryable): SqlExecutor {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []): Promise<SqlResult<R>> {
      const result = await db.query<R>(text, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? 0 };
    },
  };
}

/**
 * One process per data directory: two PGlite instances on the same files would corrupt
 * them. A lock file holds the owner's pid; a lock left by a process that is gone is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockFile = join(dataDir, 'tributary-indexer.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeFileSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processAlive(owner)) {
        throw new Error(`the delivery log in ${dataDir} is open in process ${owner}; only one indexer may use an embedded database (use DELIVERY_LOG_DATABASE_URL to share one)`);
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`could not lock ${lockFile}`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `dataDir` undefined: in memory (tests). */
export async function openPglite(dataDir: string | undefined): Promise<SqlClient> {
  let unlock = () => undefined as void;
  let db: PGlite;
  if (dataDir === undefined) {
    db = new PGlite({ parsers: { [pgliteTypes.INT8]: (value: string) => Number(value) } });
  } else {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    unlock = lockDataDir(dir);
    db = new PGlite({ dataDir: join(dir, 'pgdata'), parsers: { [pgliteTypes.INT8]: (value: string) => Number(value) } });
  }
  try {
    await db.waitReady;
  } catch (error) {
    unlock();
    throw error;
  }
  const direct = executor(db as unknown as PGliteQueryable);
  return {
    kind: 'pglite',
    query: direct.query,
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => db.transaction((tx) => work(executor(tx as unknown as PGliteQueryable))),
    async close() {
      try {
        await db.close();
      } finally {
        unlock();
      }
    },
  };
}
