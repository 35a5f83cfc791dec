/**
 * What happens to a delivery: before an attempt (the destination as configured now, and
 * the retry window) and after it (delivered, a retry record on a tier topic, or a dead
 * letter). Pure; the dispatcher writes the records these functions return.
 */
import { formatDuration, isPastWindow, planNoSoonerThan, planRetry, planRetryAfter, type RetryLadder } from '@tributary/shared';
import type { DeadLetter, DeadLetterReason, Delivery, Destination, RetryRecord } from '@tributary/schemas';
import type { DeferReason } from './admission.js';
import type { DeliveryVerdict } from './classify.js';

const DEFERRED_PREFIX = 'deferred: ';
const DEFER_TEXT: Record<DeferReason, string> = {
  circuit_open: 'circuit open',
  backlog_full: 'destination backlog full',
};

/** Whether a delivery's lastError says it was last deferred rather than attempted. */
export function wasDeferred(delivery: Pick<Delivery, 'lastError'>): boolean {
  return delivery.lastError?.startsWith(DEFERRED_PREFIX) ?? false;
}

/** The last error of a real attempt, behind any deferral notes. */
export function lastAttemptError(lastError: string | null): string | null {
  if (!lastError?.startsWith(DEFERRED_PREFIX)) return lastError;
  const marker = lastError.indexOf('; last error: ');
  return marker < 0 ? null : lastError.slice(marker + '; last error: '.length);
}

/** `deferred: circuit open; last error: HTTP 503` — the deferral, and what the last attempt met. */
export function deferredError(reason: DeferReason, lastError: string | null): string {
  const previous = lastAttemptError(lastError);
  return `${DEFERRED_PREFIX}${DEFER_TEXT[reason]}${previous ? `; last error: ${previous}` : ''}`;
}

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

/**
 * How many ladder steps fit into `elapsedMs` (the last delay repeating): a delivery that
 * has been waiting that long is as far up the ladder as one retried all along.
 */
export function stepsElapsed(ladder: RetryLadder, elapsedMs: number): number {
  let spent = 0;
  for (let steps = 0; steps < ladder.delaysMs.length; steps++) {
    const delay = ladder.delaysMs[steps]!;
    if (spent + delay > elapsedMs) return steps;
    spent += delay;
  }
  const last = ladder.delaysMs[ladder.delaysMs.length - 1]!;
  return ladder.delaysMs.length + Math.floor((elapsedMs - spent) / last);
}

/**
 * A delivery put back without an attempt — its destination's circuit is open, or its backlog
 * is full: no request is made and the attempt count stays as it is, but the retry window
 * starts (if it had not) and the delay climbs the ladder with the time already spent waiting.
 * So a destination that stays down costs ever fewer re-reads of its backlog (10 s, 1 m, 5 m …
 * apart) rather than one every 10 s per waiting delivery, and its deliveries end like any
 * failing delivery's: as `expired` dead letters when no further wait fits in the window.
 *
 * `probesAt`, when the circuit is open: the time it will let probes through. The delivery
 * waits on the longest tier that is back by then (planNoSoonerThan) — read again earlier, it
 * would only be deferred again. A destination whose circuit stays open for minutes costs a
 * re-read of its backlog every few minutes, not one per ladder step.
 */
export function deferral(delivery: Delivery, reason: DeferReason, ladder: RetryLadder, now: number, probesAt: number | null = null): Settlement {
  const firstAttemptAt = delivery.firstAttemptAt ?? now;
  const deferred: Delivery = { ...delivery, firstAttemptAt, lastError: deferredError(reason, delivery.lastError) };
  const step = Math.max(delivery.attempts, stepsElapsed(ladder, now - firstAttemptAt));
  const laddered = planRetry(ladder, step + 1, firstAttemptAt, now);
  const plan = probesAt === null ? laddered : planNoSoonerThan(ladder, laddered, probesAt, firstAttemptAt, now);
  if (plan.kind === 'expired') {
    const window = formatDuration(ladder.windowMs);
    const error = `the destination could not be attempted again within the ${window} retry window (${DEFER_TEXT[reason]}); last error: ${lastAttemptError(delivery.lastError) ?? 'none'}`;
    return { kind: 'dead', letter: deadLetter(deferred, 'expired', delivery.lastStatus, error, now) };
  }
  return { kind: 'retry', record: { delivery: deferred, dueAt: plan.dueAt, tier: plan.tier } };
}
