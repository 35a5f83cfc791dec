/**
 * What happens to a delivery: before an attempt (the destination as configured now, and
 * the retry window) and after it (delivered, a retry record on a tier topic, or a dead
 * letter). Pure; the dispatcher writes the records these functions return.
 */
import { formatDuration, isPastWindow, ladderTiers, planRetry, type RetryLadder } from '@tributary/shared';
import type { DeadLetter, DeadLetterReason, Delivery, Destination, RetryRecord } from '@tributary/schemas';
import type { DeliveryVerdict } from './classify.js';

export const DEFERRED_ERROR = 'deferred: destination saturated';

export type Preflight = { kind: 'send'; destination: Destination } | { kind: 'dead'; letter: DeadLetter };

export type Settlement =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; record: RetryRecord }
  | { kind: 'dead'; letter: DeadLetter };

function deadLetter(delivery: Delivery, reason: DeadLetterReason, status: number | null, error: string, now: number): DeadLetter {
  return { delivery, reason, status, error, deadAt: now };
}

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
  const plan = planRetry(ladder, attempted.attempts, firstAttemptAt, now);
  if (plan.kind === 'expired') {
    const window = formatDuration(ladder.windowMs);
    const error = `no retry fits in the ${window} window (next would be due ${new Date(plan.wouldBeDueAt).toISOString()}, window ends ${new Date(plan.deadline).toISOString()}); last error: ${verdict.error}`;
    return { kind: 'dead', letter: deadLetter(attempted, 'expired', verdict.status, error, now) };
  }
  return { kind: 'retry', record: { delivery: attempted, dueAt: plan.dueAt, tier: plan.tier } };
}

/**
 * A delivery put back without an attempt because its destination is saturated: it goes
 * to the first retry tier with its attempt count unchanged, saying why.
 */
export function deferral(delivery: Delivery, ladder: RetryLadder, now: number): RetryRecord {
  const first = ladderTiers(ladder)[0];
  if (!first) throw new Error('the retry ladder has no tiers');
  return { delivery: { ...delivery, lastError: DEFERRED_ERROR }, dueAt: now + first.delayMs, tier: first.label };
}
