/**
 * A delivery put back on the retry ladder without a request: its destination's circuit is open,
 * or its backlog full. Pure. The dispatcher defers what it has read; the router defers a new
 * delivery itself when every dispatcher has the destination's circuit open for a while yet
 * (`circuitOpenUntil`), so that such a delivery costs no read and no write in the dispatcher.
 */
import type { DeadLetter, DeadLetterReason, Delivery, DeliveryAttempt, RetryRecord } from '@tributary/schemas';
import { formatDuration } from './duration.js';
import { planLastWait, planNoSoonerThan, planRetry, type RetryLadder } from './retry-ladder.js';

export type DeferReason = 'circuit_open' | 'backlog_full';

export type Deferral = { kind: 'retry'; record: RetryRecord } | { kind: 'dead'; letter: DeadLetter };

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

export function deadLetter(delivery: Delivery, reason: DeadLetterReason, status: number | null, error: string, now: number): DeadLetter {
  return { delivery, reason, status, error, deadAt: now };
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
 * No request is made and the attempt count stays as it is, but the retry window starts (if it
 * had not) and the delay climbs the ladder with the time already spent waiting. So a
 * destination that stays down costs ever fewer re-reads of its backlog (10 s, 1 m, 5 m …
 * apart) rather than one every 10 s per waiting delivery, and its deliveries end like any
 * failing delivery's: as `expired` dead letters when no wait fits in the window (the step
 * reached, or failing that a last wait: planLastWait).
 *
 * `probesAt`, when the circuit is open: the time it will let probes through. The delivery
 * waits on the longest tier that is back by then (planNoSoonerThan) — read again earlier, it
 * would only be deferred again. A destination whose circuit stays open for minutes costs a
 * re-read of its backlog every few minutes, not one per ladder step.
 */
export function deferral(delivery: Delivery, reason: DeferReason, ladder: RetryLadder, now: number, probesAt: number | null = null): Deferral {
  const firstAttemptAt = delivery.firstAttemptAt ?? now;
  const deferred: Delivery = { ...delivery, firstAttemptAt, lastError: deferredError(reason, delivery.lastError) };
  const step = Math.max(delivery.attempts, stepsElapsed(ladder, now - firstAttemptAt));
  const laddered = planRetry(ladder, step + 1, firstAttemptAt, now);
  let plan = probesAt === null ? laddered : planNoSoonerThan(ladder, laddered, probesAt, firstAttemptAt, now);
  if (plan.kind === 'expired') plan = planLastWait(ladder, firstAttemptAt, now) ?? plan;
  if (plan.kind === 'expired') {
    const window = formatDuration(ladder.windowMs);
    const error = `the destination could not be attempted again within the ${window} retry window (${DEFER_TEXT[reason]}); last error: ${lastAttemptError(delivery.lastError) ?? 'none'}`;
    return { kind: 'dead', letter: deadLetter(deferred, 'expired', delivery.lastStatus, error, now) };
  }
  return { kind: 'retry', record: { delivery: deferred, dueAt: plan.dueAt, tier: plan.tier } };
}

/**
 * The delivery log's record of an end decided outside the dispatcher, without a request: a
 * deferral that found no wait left in the window (`deferReason` set: the retry-scheduler
 * deferring a due record of a circuit open everywhere), or a due retry whose window had passed
 * (`preflight`). Every end goes to the delivery log, whoever decides it; otherwise the log would
 * show such a delivery as still waiting.
 */
export function endedWithoutRequest(letter: DeadLetter, deferReason: DeferReason | null, now: number): DeliveryAttempt {
  const { delivery } = letter;
  return {
    deliveryId: delivery.deliveryId,
    messageId: delivery.messageId,
    sourceId: delivery.sourceId,
    destinationId: delivery.destinationId,
    messageType: delivery.messageType,
    userId: delivery.userId ?? null,
    anonymousId: delivery.anonymousId ?? null,
    kind: deferReason === null ? 'preflight' : 'deferred',
    attempt: delivery.attempts,
    outcome: 'dead',
    lane: 'retry',
    startedAt: now,
    durationMs: 0,
    status: letter.status,
    error: letter.error,
    deferReason,
    deadReason: letter.reason,
    nextAttemptAt: null,
    tier: null,
    receivedAt: delivery.receivedAt,
    replays: delivery.replays,
    targets: [],
  };
}
