/**
 * The retry scheduler's settings beyond `commonEnv`, validated at start-up (see the
 * README). RETRY_LADDER and RETRY_WINDOW must be the dispatcher's: the dispatcher writes
 * to the tier topics of its ladder, and the scheduler consumes the tier topics of its own.
 * The transactional ids come from the common INSTANCE_ID.
 */
import { DEFAULT_LADDER, envTypes, formatDuration, validateLadder, type RetryLadder } from '@tributary/shared';

export const schedulerEnv = {
  HTTP_PORT: envTypes.port(9103),
  /** Delay after each failed attempt; the last repeats. One tier topic per distinct delay. */
  RETRY_LADDER: envTypes.durationList(DEFAULT_LADDER.delaysMs.map(formatDuration).join(',')),
  /** No attempt later than this after the first one; later retries become `expired` dead letters. */
  RETRY_WINDOW: envTypes.duration(formatDuration(DEFAULT_LADDER.windowMs)),
  /** Retry records released (or expired) per Kafka transaction. */
  RETRY_SCHEDULER_MAX_BATCH: envTypes.positiveInt(500),
  /**
   * Consumer-group session timeout: how long a crashed scheduler keeps its tier partitions
   * before the group hands them to another member (or to its own restarted process).
   */
  RETRY_SCHEDULER_SESSION_TIMEOUT: envTypes.duration('30s'),
};

export function ladderFromSettings(settings: { RETRY_LADDER: number[]; RETRY_WINDOW: number }): RetryLadder {
  return validateLadder({ delaysMs: settings.RETRY_LADDER, windowMs: settings.RETRY_WINDOW });
}
