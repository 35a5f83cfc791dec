/**
 * The indexer's settings beyond `commonEnv`, validated at start-up (see the README). The
 * transactional id that writes quarantine records with the consumed offsets comes from the
 * common INSTANCE_ID.
 */
import { z } from 'zod';
import { adminTokenSetting, envTypes } from '@tributary/shared';

export const indexerEnv = {
  HTTP_PORT: envTypes.port(9104),
  /** PostgreSQL (production). Unset: the embedded PGlite in DELIVERY_LOG_DATA_DIR. */
  DELIVERY_LOG_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL, e.g. postgresql://tributary@db:5432/tributary')
    .optional(),
  DELIVERY_LOG_DATA_DIR: z.string().min(1).prefault('.tributary/delivery-log'),
  /** Attempts, messages and delivery states older than this are deleted. */
  DELIVERY_LOG_RETENTION: envTypes.duration('7d'),
  /** Records written per database transaction (a fetched batch is cut into chunks of at most this many). */
  INDEXER_MAX_BATCH: envTypes.positiveInt(2000),
  /** Bytes of Kafka record values per database transaction, so a backlog of large records stays bounded in memory. */
  INDEXER_MAX_BATCH_BYTES: envTypes.positiveInt(8 * 1024 * 1024),
  /**
   * Consumer-group session timeout: how long a crashed indexer keeps its partitions before the
   * group hands them to another member (or to its own restarted process).
   */
  INDEXER_SESSION_TIMEOUT: envTypes.duration('30s'),
  /**
   * The indexer's CPU niceness (0–19): it lowers its own scheduling priority at start, so that
   * on a machine it shares with the delivery path it takes the CPU the deliveries leave — it is
   * beside that path, and falling behind for a while delays no delivery. 0 leaves it as started.
   */
  INDEXER_NICE: envTypes.nice(10),
  /** Bearer token of the read API (the same as ingest's). Unset: the routes answer 404 admin_disabled. */
  ADMIN_TOKEN: adminTokenSetting(),
};

/** Where the delivery log lives, for logs: never the URL's password. */
export function describeDatabase(env: { DELIVERY_LOG_DATABASE_URL?: string | undefined; DELIVERY_LOG_DATA_DIR: string }): string {
  if (env.DELIVERY_LOG_DATABASE_URL === undefined) return `pglite:${env.DELIVERY_LOG_DATA_DIR}`;
  return redactDatabaseUrl(env.DELIVERY_LOG_DATABASE_URL);
}

/** The URL with its password (and any password query parameter) replaced by `***`. */
export function redactDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'postgresql://(unparseable URL)';
  }
  if (parsed.password) parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) if (/pass/i.test(key)) parsed.searchParams.set(key, '***');
  return parsed.toString();
}
