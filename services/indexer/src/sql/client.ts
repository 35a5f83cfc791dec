/**
 * The one way the indexer talks SQL, whichever database is behind it: node-postgres on a
 * PostgreSQL server, or PGlite in-process. Both run the same statements (PostgreSQL's
 * dialect: PGlite is PostgreSQL compiled to WebAssembly), and both hand rows back in the
 * same JavaScript types — bigint columns as numbers (every bigint here is an epoch
 * millisecond, an offset or a count, all far below 2^53), jsonb parsed, text as strings.
 */

/** Something that runs a statement: the client itself, or a transaction of it. */
export interface SqlExecutor {
  /** Runs one statement with `$1…` parameters and returns its rows. */
  query<R extends object = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<SqlResult<R>>;
}

export interface SqlResult<R> {
  rows: R[];
  /** Rows inserted, updated or deleted (0 for a SELECT on PGlite, the row count on pg). */
  rowCount: number;
}

export interface SqlClient extends SqlExecutor {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Why a write failed. `data`: the database refused what a record holds (SQLSTATE classes 22,
 * 23, 54: invalid text, a value out of range, an index row too large) — the same record fails
 * the same way every time, so it must be set aside, not retried. `transient`: any other
 * SQLSTATE (the server shutting down, a deadlock, a timeout) or a sign of a lost connection —
 * worth retrying until it passes. `other`: no SQLSTATE and no sign of the connection, such as
 * a RangeError from serialising a record: most likely the record, but the caller must ask the
 * database whether it answers before blaming the record (write-chunks.ts), because a driver may
 * report an outage in words this list does not know.
 */
export type SqlFailure = 'data' | 'transient' | 'other';

const DATA_CLASSES = new Set(['22', '23', '54']);

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Node's system errors (ECONNREFUSED, EPIPE, EAI_AGAIN): tested first, as EPIPE has a SQLSTATE's shape (no SQLSTATE class starts with E). */
const SYSTEM_ERROR_CODE = /^E[A-Z_]{2,}$/;

/**
 * How node-postgres and PGlite word a connection that is gone or never came: "Connection
 * terminated unexpectedly", "timeout exceeded when trying to connect", "Client has encountered
 * a connection error and is not queryable", "Cannot use a pool after calling end on the pool",
 * "Query read timeout", "PGlite is closed".
 */
const CONNECTION_WORDS = /connect|terminat|timeout|timed out|not queryable|closed|socket|end on the pool|ECONN/i;

export function classifySqlError(error: unknown): SqlFailure {
  const { code, errno, syscall, name, message } = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  if (typeof code === 'string' && SYSTEM_ERROR_CODE.test(code)) return 'transient';
  if (typeof code === 'string' && SQLSTATE.test(code)) return DATA_CLASSES.has(code.slice(0, 2)) ? 'data' : 'transient';
  if (errno !== undefined || syscall !== undefined) return 'transient';
  if (name === 'AbortError' || name === 'TimeoutError') return 'transient';
  if (typeof message === 'string' && CONNECTION_WORDS.test(message)) return 'transient';
  return 'other';
}
