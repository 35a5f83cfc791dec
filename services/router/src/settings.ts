/**
 * The router's settings beyond `commonEnv`, validated at start-up (see the README). The
 * transactional id comes from the common INSTANCE_ID.
 */
import { envTypes, retryLadderEnv } from '@tributary/shared';

export const routerEnv = {
  HTTP_PORT: envTypes.port(9101),
  /** A messageId repeated by the same source within this window is forwarded once. */
  DEDUP_WINDOW: envTypes.duration('24h'),
  /** Upper bound on remembered message ids; past it the oldest are forgotten first. */
  DEDUP_MAX_ENTRIES: envTypes.positiveInt(2_000_000),
  /** Estimated bytes the dedup state may hold (keys and overhead; see dedup.ts): 200 MB. */
  DEDUP_MAX_BYTES: envTypes.positiveInt(200_000_000),
  /**
   * Units a second (ingest's: a delivery of up to 4 KiB) each source may have routed from the
   * main ingest topic, by the records' timestamps; past it, records are moved to the overflow
   * lane first (main-lane-share.ts). Four times INGEST_SOURCE_RATE: it catches what a producer
   * writes to the topic directly. 0 = never moved.
   */
  ROUTER_SOURCE_RATE: envTypes.nonNegativeInt(2000),
  /** Ingest records routed per Kafka transaction. */
  ROUTER_MAX_BATCH: envTypes.positiveInt(1000),
  /**
   * Bytes a routing transaction writes, estimated as each record's size times its source's
   * destinations: a transaction stays open while it is written, and the main lane and every
   * dispatcher reading the partitions it writes wait for it. 4 MiB.
   */
  ROUTER_MAX_BATCH_BYTES: envTypes.positiveInt(4 * 1024 * 1024),
  /**
   * Consumer-group session timeout: how long a crashed router keeps its partitions before
   * the group hands them to another member (or to its own restarted process).
   */
  ROUTER_SESSION_TIMEOUT: envTypes.duration('30s'),
  /** The dispatcher's and the scheduler's: a delivery of a circuit open everywhere is deferred here onto the ladder. */
  ...retryLadderEnv,
};
