/**
 * The dispatcher's settings (beyond the common Kafka/registry/logging ones), validated by
 * `runService` through zod. Defaults follow the Webhooks spec: a 5 s answer window and a
 * retry period of at most 4 hours.
 */
import { envTypes, validateLadder, type RetryLadder } from '@tributary/shared';

export const dispatcherEnv = {
  HTTP_PORT: envTypes.port(9102),
  /** Whole exchange per URL: connect, TLS, request, response headers and body. */
  WEBHOOK_TIMEOUT: envTypes.duration('5s'),
  /** Lifts the SSRF guard (loopback, private, link-local, unique-local targets). */
  DELIVERY_ALLOW_PRIVATE_NETWORKS: envTypes.boolean(false),
  RETRY_LADDER: envTypes.durationList('10s,1m,5m,15m,30m,1h,1h,1h'),
  RETRY_WINDOW: envTypes.duration('4h'),
  /** Deliveries being attempted at once, over all destinations. */
  DELIVERY_MAX_IN_FLIGHT: envTypes.positiveInt(512),
  /** Deliveries being attempted at once for one destination (also the connections per origin). */
  DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: envTypes.positiveInt(64),
  /** A destination's backlog at which it is judged; a stalled one keeps no more queued (see scheduler.ts). */
  DELIVERY_MAX_QUEUED_PER_DESTINATION: envTypes.positiveInt(256),
  /** Deliveries read but not yet settled (queued, in flight or being recorded); fetching pauses beyond. */
  DELIVERY_MAX_BUFFERED: envTypes.positiveInt(2048),
  /**
   * A destination at its backlog bound has its new deliveries deferred when it has finished
   * no request for this long while requests are running, or its requests take this long on
   * average (see scheduler.ts).
   */
  DELIVERY_STALLED_AFTER: envTypes.duration('500ms'),
};

export function ladderFromSettings(settings: { RETRY_LADDER: number[]; RETRY_WINDOW: number }): RetryLadder {
  return validateLadder({ delaysMs: settings.RETRY_LADDER, windowMs: settings.RETRY_WINDOW });
}
