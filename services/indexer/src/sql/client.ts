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
 * Why a statement failed, by SQLSTATE class: `data` when the database refused what a
 * record holds (invalid text, a value out of range, an index row too large) — the same
 * record fails the same way every time, so it must be set aside, not retried; `transient`
 * for everything else (the server away or restarting, a connection lost, a deadlock, a
 * timeout) — worth retrying until it passes.
 */
export type SqlFailure = 'data' | 'transient';

const DATA_CLASSES = new Set(['22', '23', '54']);

export function classifySqlError(error: unknown): SqlFailure {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && DATA_CLASSES.has(code.slice(0, 2))) return 'data';
  return 'transient';
}
