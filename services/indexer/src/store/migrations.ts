/**
 * The delivery log's schema, as numbered migrations applied in order at start-up and
 * recorded in `delivery_log_migrations`. A migration, once released, never changes: a
 * change is a new one.
 *
 * All of them run in one transaction under a transaction-scoped advisory lock, so two
 * indexers starting at once against one PostgreSQL server take turns — the second finds the
 * work done — and a failure leaves the schema as it was.
 *
 * Times are epoch milliseconds in bigint columns rather than timestamptz: exact, compared
 * and subtracted with plain arithmetic (latencies, buckets), and handed back identically by
 * node-postgres and PGlite without time-zone conversion on either side.
 */
import type { SqlClient } from '../sql/client.js';

export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

/** Arbitrary, fixed: the key of the advisory lock migrations take ("tributar" in ASCII; below 2^63). */
export const MIGRATION_LOCK_KEY = 0x7472696275746172n;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'attempts, messages and delivery states',
    statements: [
      // One row per record of <ns>.attempts.v1; its Kafka position is its identity, so a
      // record indexed again (after a crash, before its offset was committed) is a no-op.
      `CREATE TABLE attempts (
        kafka_partition integer NOT NULL,
        kafka_offset bigint NOT NULL,
        delivery_id text NOT NULL,
        message_id text NOT NULL,
        source_id text NOT NULL,
        destination_id text NOT NULL,
        message_type text NOT NULL,
        user_id text,
        anonymous_id text,
        kind text NOT NULL,
        attempt integer NOT NULL,
        outcome text NOT NULL,
        lane text NOT NULL,
        started_at bigint NOT NULL,
        duration_ms integer NOT NULL,
        status integer,
        error text,
        defer_reason text,
        dead_reason text,
        next_attempt_at bigint,
        tier text,
        received_at bigint NOT NULL,
        replays integer NOT NULL,
        targets jsonb NOT NULL,
        PRIMARY KEY (kafka_partition, kafka_offset)
      )`,
      // Newest first with the keyset (started_at, partition, offset) the search pages on.
      `CREATE INDEX attempts_by_time ON attempts (started_at DESC, kafka_partition DESC, kafka_offset DESC)`,
      `CREATE INDEX attempts_by_destination ON attempts (destination_id, started_at DESC, kafka_partition DESC, kafka_offset DESC)`,
      `CREATE INDEX attempts_by_user ON attempts (user_id, started_at DESC, kafka_partition DESC, kafka_offset DESC) WHERE user_id IS NOT NULL`,
      `CREATE INDEX attempts_by_message ON attempts (message_id)`,
      // One row per (source, message) of <ns>.ingest.v1: the first copy wins, as in the
      // router's dedup. `seq` orders the live tail by when a message was indexed.
      `CREATE TABLE messages (
        source_id text NOT NULL,
        message_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        type text NOT NULL,
        user_id text,
        anonymous_id text,
        event text,
        received_at bigint NOT NULL,
        event_timestamp bigint NOT NULL,
        message jsonb NOT NULL,
        routing jsonb NOT NULL,
        kafka_partition integer NOT NULL,
        kafka_offset bigint NOT NULL,
        PRIMARY KEY (source_id, message_id)
      )`,
      `CREATE UNIQUE INDEX messages_by_seq ON messages (seq)`,
      `CREATE INDEX messages_by_source ON messages (source_id, seq)`,
      `CREATE INDEX messages_by_message ON messages (message_id)`,
      `CREATE INDEX messages_by_time ON messages (received_at)`,
      // The latest state of each delivery (message × destination). It only moves forward:
      // attempts of one delivery share a key, so a partition, and their offsets order them.
      `CREATE TABLE deliveries (
        source_id text NOT NULL,
        delivery_id text NOT NULL,
        message_id text NOT NULL,
        destination_id text NOT NULL,
        user_id text,
        received_at bigint NOT NULL,
        state text NOT NULL,
        attempts integer NOT NULL,
        first_attempt_at bigint,
        last_attempt_at bigint,
        next_attempt_at bigint,
        last_status integer,
        last_error text,
        delivered_at bigint,
        latency_ms bigint,
        updated_at bigint NOT NULL,
        last_partition integer,
        last_offset bigint,
        PRIMARY KEY (source_id, delivery_id)
      )`,
      `CREATE INDEX deliveries_by_message ON deliveries (message_id)`,
      `CREATE INDEX deliveries_by_destination ON deliveries (destination_id, updated_at)`,
      `CREATE INDEX deliveries_waiting ON deliveries (destination_id) WHERE state IN ('retrying', 'deferred')`,
      `CREATE INDEX deliveries_by_time ON deliveries (updated_at)`,
    ],
  },
  {
    version: 2,
    name: 'fewer writes per event',
    statements: [
      // At the benchmark's maximum every index entry and every jsonb document was paid for
      // several thousand times a second, most of it in PGlite's WebAssembly.
      //
      // Documents are only stored and returned, never queried inside: json keeps the text as
      // given (and, unlike jsonb, takes what JSON can say but PostgreSQL text cannot, such as
      // \u0000), so they are no longer converted or rewritten on the way in.
      `ALTER TABLE messages ALTER COLUMN message TYPE json USING message::json, ALTER COLUMN routing TYPE json USING routing::json`,
      `ALTER TABLE attempts ALTER COLUMN targets TYPE json USING targets::json`,
      // A record's message id is its own, so (message_id, partition, offset) is as unique as its
      // position and also finds a message's attempts: one index fewer per attempt.
      `ALTER TABLE attempts DROP CONSTRAINT attempts_pkey`,
      `ALTER TABLE attempts ADD PRIMARY KEY (message_id, kafka_partition, kafka_offset)`,
      `DROP INDEX IF EXISTS attempts_by_message`,
      // Messages are found by id through the primary key (id first; the conflict target is the
      // same two columns); the tail filters by source while walking seq.
      `ALTER TABLE messages DROP CONSTRAINT messages_pkey`,
      `ALTER TABLE messages ADD PRIMARY KEY (message_id, source_id)`,
      `DROP INDEX IF EXISTS messages_by_message`,
      `DROP INDEX IF EXISTS messages_by_source`,
      // deliveries now holds only the deliveries that did not succeed at their first attempt
      // (what "retries pending" counts); a message's delivery states are folded from its
      // attempts when it is shown, and a routed delivery with no attempt yet is derived from
      // its routing as pending.
      `DROP INDEX IF EXISTS deliveries_by_destination`,
      `DROP INDEX IF EXISTS deliveries_by_message`,
      `DELETE FROM deliveries WHERE state = 'pending' OR (state = 'delivered' AND attempts <= 1)`,
    ],
  },
  {
    version: 3,
    name: 'the live tail by source',
    statements: [
      // The console's live tail asks `WHERE source_id = $1 ORDER BY seq DESC LIMIT n` on every
      // open. Without this index (migration 2 dropped it) the plan walks messages_by_seq
      // backwards and filters: for a quiet source, a scan of every message, which on PGlite
      // held the writer and the health check behind it. In the query's order, so the tail is
      // the index's first n entries of the source.
      `CREATE INDEX IF NOT EXISTS messages_by_source_seq ON messages (source_id, seq DESC)`,
    ],
  },
];

/** Applies the migrations not applied yet; returns the versions it applied. */
export async function migrate(db: SqlClient, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY.toString()]);
    await tx.query(`CREATE TABLE IF NOT EXISTS delivery_log_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at bigint NOT NULL
    )`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM delivery_log_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const known = Math.max(0, ...migrations.map((migration) => migration.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new Error(`the delivery log's schema is at version ${newest}, newer than this indexer knows (${known}): run a newer indexer`);
    }
    const done: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query('INSERT INTO delivery_log_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, Date.now()]);
      done.push(migration.version);
    }
    return done;
  });
}
