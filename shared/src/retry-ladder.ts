/**
 * Retry-ladder arithmetic shared by the dispatcher (which schedules retries) and the
 * retry scheduler (which fires them). A ladder is a list of delays, one per attempt;
 * the last delay repeats. Every retry must fall inside the window measured from the
 * first attempt, so no attempt ever happens later than firstAttemptAt + window.
 */
import { formatDuration } from './duration.js';

export interface RetryLadder {
  delaysMs: readonly number[];
  windowMs: number;
}

export const DEFAULT_LADDER: RetryLadder = {
  delaysMs: [10_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000],
  windowMs: 4 * 3_600_000,
};

export function validateLadder(ladder: RetryLadder): RetryLadder {
  if (ladder.delaysMs.length === 0) throw new Error('RETRY_LADDER needs at least one delay');
  for (const delay of ladder.delaysMs) {
    if (!Number.isInteger(delay) || delay <= 0) throw new Error(`RETRY_LADDER delays must be positive, got ${delay}`);
  }
  if (ladder.windowMs <= 0) throw new Error('RETRY_WINDOW must be positive');
  return ladder;
}

/** The tier label of a delay, used in the tier topic's name: 10000 → `10s`. */
export function tierLabel(delayMs: number): string {
  return formatDuration(delayMs);
}

/** Distinct tiers of a ladder, in ladder order (a repeated delay shares one tier topic). */
export function ladderTiers(ladder: RetryLadder): Array<{ label: string; delayMs: number }> {
  const seen = new Map<string, { label: string; delayMs: number }>();
  for (const delayMs of ladder.delaysMs) {
    const label = tierLabel(delayMs);
    if (!seen.has(label)) seen.set(label, { label, delayMs });
  }
  return [...seen.values()];
}

/**
 * The distinct tiers of a ladder, shortest delay first, computed once per ladder: the plans
 * below run for every deferred delivery, and a ladder is fixed for a process's life.
 */
const tiersByDelay = new WeakMap<RetryLadder, ReadonlyArray<{ label: string; delayMs: number }>>();
function tiersShortestFirst(ladder: RetryLadder): ReadonlyArray<{ label: string; delayMs: number }> {
  let tiers = tiersByDelay.get(ladder);
  if (!tiers) tiersByDelay.set(ladder, (tiers = ladderTiers(ladder).sort((a, b) => a.delayMs - b.delayMs)));
  return tiers;
}

export type RetryPlan =
  | { kind: 'retry'; tier: string; delayMs: number; dueAt: number }
  | { kind: 'expired'; wouldBeDueAt: number; deadline: number };

/**
 * What to do after attempt number `attemptsMade` (1 = the first attempt) failed with a
 * retryable error at `now`.
 */
export function planRetry(ladder: RetryLadder, attemptsMade: number, firstAttemptAt: number, now: number): RetryPlan {
  const index = Math.min(Math.max(attemptsMade, 1), ladder.delaysMs.length) - 1;
  const delayMs = ladder.delaysMs[index]!;
  const dueAt = now + delayMs;
  const deadline = firstAttemptAt + ladder.windowMs;
  if (dueAt > deadline) return { kind: 'expired', wouldBeDueAt: dueAt, deadline };
  return { kind: 'retry', tier: tierLabel(delayMs), delayMs, dueAt };
}

/**
 * A retry the receiver asked to come no sooner than `retryAfterMs` (Retry-After on a 429 or
 * 503): on the smallest tier whose delay is at least that long, so every tier topic stays in
 * due order and the receiver is never asked earlier than it wished — unless it asked for more
 * than the longest tier, which then bounds the wait. Like every retry, inside the window.
 */
export function planRetryAfter(ladder: RetryLadder, retryAfterMs: number, firstAttemptAt: number, now: number): RetryPlan {
  const tiers = tiersShortestFirst(ladder);
  const tier = tiers.find((candidate) => candidate.delayMs >= retryAfterMs) ?? tiers[tiers.length - 1]!;
  const dueAt = now + tier.delayMs;
  const deadline = firstAttemptAt + ladder.windowMs;
  if (dueAt > deadline) return { kind: 'expired', wouldBeDueAt: dueAt, deadline };
  return { kind: 'retry', tier: tier.label, delayMs: tier.delayMs, dueAt };
}

/**
 * A last wait for a delivery deferred without a request whose ladder step, counted from the
 * time it has waited, asks for more than the window has left: the longest tier that still comes
 * back inside the window — a circuit open for seconds near the window's end must not end a
 * delivery an attempt could still reach — provided it spends at least half of what is left.
 * So a destination that stays down costs each of its deliveries a couple of re-reads more (with
 * the default ladder, 59 minutes left: 30 m, then 15 m, then the end), not one per shrinking
 * tier down to 10 s. Undefined when no such tier fits.
 */
export function planLastWait(ladder: RetryLadder, firstAttemptAt: number, now: number): RetryPlan | undefined {
  const left = firstAttemptAt + ladder.windowMs - now;
  let best: { label: string; delayMs: number } | undefined;
  for (const tier of tiersShortestFirst(ladder)) {
    if (tier.delayMs > left) break;
    best = tier;
  }
  return best && best.delayMs * 2 >= left ? { kind: 'retry', tier: best.label, delayMs: best.delayMs, dueAt: now + best.delayMs } : undefined;
}

/** Whether an attempt at `now` would fall outside the window (it must not be made). */
export function isPastWindow(ladder: RetryLadder, firstAttemptAt: number | null, now: number): boolean {
  return firstAttemptAt !== null && now > firstAttemptAt + ladder.windowMs;
}

/**
 * A retry that need not come back before `notBefore` — a delivery deferred while its
 * destination's circuit is open until then: read again earlier, it would only be deferred
 * again. Moved to the longest tier that still comes back no later than `notBefore` (so the
 * delivery is there when the circuit lets deliveries through, never later on its account)
 * and inside the window; the plan as it was when no longer tier fits.
 */
export function planNoSoonerThan(ladder: RetryLadder, plan: RetryPlan, notBefore: number, firstAttemptAt: number, now: number): RetryPlan {
  if (plan.kind !== 'retry' || plan.dueAt >= notBefore) return plan;
  const deadline = firstAttemptAt + ladder.windowMs;
  // The longest tier that is back by then and inside the window, if longer than the plan's.
  let best: { label: string; delayMs: number } | undefined;
  for (const tier of tiersShortestFirst(ladder)) {
    if (now + tier.delayMs > notBefore || now + tier.delayMs > deadline) break;
    if (tier.delayMs > plan.delayMs) best = tier;
  }
  return best ? { kind: 'retry', tier: best.label, delayMs: best.delayMs, dueAt: now + best.delayMs } : plan;
}
