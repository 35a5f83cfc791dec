/**
 * The delivery log on a PostgreSQL server, through a node-postgres pool. Bounded waits
 * everywhere: a connection attempt, a statement and an idle-in-transaction session all time
 * out, so a database that hangs shows up as errors (and an unready indexer) rather than as
 * an indexer that waits forever.
 */
import pg from 'pg';
import type { SqlClient, SqlExecutor, SqlResult } from './client.js';

const INT8_OID = 20;

// Per pool rather than pg's global type registry, so nothing else in the process is affected.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface PostgresOptions {
  url: string;
  /** Connections kept: the writer's transaction plus read API queries. */
  maxConnections?: number;
  statementTimeoutMs?: number;
  onError?: (error: Error) => void;
}

function executor(client: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []): Promise<SqlResult<R>> {
      const result = await client.query<R>(text, params as unknown[]);
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
  };
}

export function openPostgres(options: PostgresOptions): SqlClient {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 5,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'tributary-indexer',
    types,
  });
  // An idle client losing its connection (the server restarting) is reported here; without
  // a listener it would be an uncaught error. The next query gets a fresh connection.
  pool.on('error', (error) => options.onError?.(error));
  const direct = executor(pool);
  return {
    kind: 'postgres',
    query: direct.query,
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(executor(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          // The connection is unusable: drop it from the pool instead of handing it out again.
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw error;
      } finally {
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
