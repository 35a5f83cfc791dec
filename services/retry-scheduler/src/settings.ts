/**
 * The retry scheduler's settings beyond `commonEnv`, validated at start-up (see the
 * README). RETRY_LADDER and RETRY_WINDOW (shared `retryLadderEnv`) must be the dispatcher's and
 * the router's: they write to the tier topics of their ladder, the scheduler reads its own.
 * The transactional ids come from the common INSTANCE_ID.
 */
import { envTypes, retryLadderEnv } from '@tributary/shared';

export const schedulerEnv = {
  HTTP_PORT: envTypes.port(9103),
  ...retryLadderEnv,
  /**
   * Largest record written (the broker's or topic's `max.message.bytes`): a dead letter larger
   * than this, less framing, is never sent — its retry record is quarantined (`too_large`).
   */
  KAFKA_MAX_RECORD_BYTES: envTypes.positiveInt(1_000_000),
  /** Retry records released (or expired) per Kafka transaction. */
  RETRY_SCHEDULER_MAX_BATCH: envTypes.positiveInt(500),
  /**
   * Consumer-group session timeout: how long a crashed scheduler keeps its tier partitions
   * before the group hands them to another member (or to its own restarted process).
   */
  RETRY_SCHEDULER_SESSION_TIMEOUT: envTypes.duration('30s'),
  /**
   * The scheduler's CPU niceness (0–19): it lowers its own scheduling priority at start. What it
   * does is already waiting — a retry due in 10 s or more, a due record of a circuit still open
   * moved up the ladder — so on a machine it shares with the delivery path it takes the CPU
   * first attempts leave: a burst of due or re-deferred records then costs a first attempt no
   * run-queue wait, and a release may run later than its due time while the machine is busy
   * (`tributary_retry_due_lag_seconds` says by how much). 0 leaves it as started.
   */
  RETRY_SCHEDULER_NICE: envTypes.nice(10),
  /** How often the namespace's tier topics are listed, to serve one that appeared after start-up. */
  RETRY_SCHEDULER_TIER_SCAN_INTERVAL: envTypes.duration('1m'),
};
