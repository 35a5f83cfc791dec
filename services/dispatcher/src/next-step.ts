/**
 * What happens to a delivery: before an attempt (the destination as configured now, and
 * the retry window) and after it (delivered, a retry record on a tier topic, or a dead
 * letter). Pure; the dispatcher writes the records these functions return. A deferral (no
 * request made) is shared `deferral`: the router defers too.
 */
import { deadLetter, formatDuration, isPastWindow, planRetry, planRetryAfter, type RetryLadder } from '@tributary/shared';
import type { DeadLetter, Delivery, Destination, RetryRecord } from '@tributary/schemas';
import type { DeliveryVerdict } from './classify.js';

export type Preflight = { kind: 'send'; destination: Destination } | { kind: 'dead'; letter: DeadLetter };

export type Settlement =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; record: RetryRecord }
  | { kind: 'dead'; letter: DeadLetter };

/**
 * Checks made at attempt time, before anything is sent: the destination must still
 * exist and be enabled (config is read per attempt, never from the record), and the
 * attempt must fall inside the retry window.
 */
export function preflight(delivery: Delivery, destination: Destination | undefined, ladder: RetryLadder, now: number): Preflight {
  if (!destination) {
    return { kind: 'dead', letter: deadLetter(delivery, 'destination_deleted', null, `destination ${delivery.destinationId} no longer exists`, now) };
  }
  if (!destination.enabled) {
    return { kind: 'dead', letter: deadLetter(delivery, 'destination_disabled', null, `destination ${delivery.destinationId} is disabled`, now) };
  }
  if (isPastWindow(ladder, delivery.firstAttemptAt, now)) {
    const window = formatDuration(ladder.windowMs);
    const error = `retry window of ${window} from the first attempt has passed; last error: ${delivery.lastError ?? 'none'}`;
    return { kind: 'dead', letter: deadLetter(delivery, 'expired', delivery.lastStatus, error, now) };
  }
  return { kind: 'send', destination };
}

/**
 * The outcome of attempt number `delivery.attempts + 1`, started at `attemptAt` and
 * finished at `now`. The first attempt starts the retry window.
 */
export function afterAttempt(delivery: Delivery, verdict: DeliveryVerdict, ladder: RetryLadder, attemptAt: number, now: number): Settlement {
  if (verdict.kind === 'delivered') return { kind: 'delivered', status: verdict.status };
  const firstAttemptAt = delivery.firstAttemptAt ?? attemptAt;
  const attempted: Delivery = {
    ...delivery,
    attempts: delivery.attempts + 1,
    firstAttemptAt,
    lastError: verdict.error,
    lastStatus: verdict.status,
  };
  if (verdict.kind === 'dead') {
    return { kind: 'dead', letter: deadLetter(attempted, verdict.reason, verdict.status, verdict.error, now) };
  }
  const plan =
    verdict.retryAfterMs === undefined
      ? planRetry(ladder, attempted.attempts, firstAttemptAt, now)
      : planRetryAfter(ladder, verdict.retryAfterMs, firstAttemptAt, now);
  if (plan.kind === 'expired') {
    const window = formatDuration(ladder.windowMs);
    const error = `no retry fits in the ${window} window (next would be due ${new Date(plan.wouldBeDueAt).toISOString()}, window ends ${new Date(plan.deadline).toISOString()}); last error: ${verdict.error}`;
    return { kind: 'dead', letter: deadLetter(attempted, 'expired', verdict.status, error, now) };
  }
  return { kind: 'retry', record: { delivery: attempted, dueAt: plan.dueAt, tier: plan.tier } };
}
