/**
 * When a retry record leaves its tier topic, decided from the record and the clock alone.
 * Pure; `tier-scheduler.ts` reads the records and carries the decisions out.
 *
 * - Not due yet → wait until `dueAt`. A partition is read in order and its head decides
 *   for everything behind it: records of one tier share one delay, so a partition is in
 *   due order up to the skew between the dispatchers' produce times. A later record due a
 *   little earlier than the head waits behind it — at most that skew, never released early.
 *   A `dueAt` further ahead than the tier's delay allows is not waited for (`verdict`).
 * - Due, and the attempt would still fall inside the window → release it to the
 *   retry lane (<ns>.deliveries.retries.v1), unchanged.
 * - An attempt now (or at its due time) would fall after `firstAttemptAt + window` →
 *   dead letter `expired`. The dispatcher checks the window too; this is the second check,
 *   and the one that catches a scheduler that was down past a record's window.
 * - Due, but its destination's circuit open at every dispatcher for a while yet → deferred
 *   again, up the ladder (`releaseTarget`).
 */
import { deferral, formatDuration, isPastWindow, parseDuration, type Deferral, type RetryLadder } from '@tributary/shared';
import type { RetryRecord } from '@tributary/schemas';

/** setTimeout's limit; a later due time is re-checked when the timer fires. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export type Verdict =
  | { kind: 'release'; lateByMs: number }
  | { kind: 'expire'; deadline: number }
  | { kind: 'wait'; until: number };

/**
 * How far past its tier's delay a record's `dueAt` may lie ahead of this process's clock and
 * still be waited for: the skew allowed between the clock that wrote it and this one.
 */
export const MAX_DUE_AHEAD_SKEW_MS = 60_000;

/**
 * `tierDelayMs`: the delay of the tier the record is on. Every writer sets `dueAt` to its clock
 * plus that delay, so a `dueAt` further ahead than the delay and MAX_DUE_AHEAD_SKEW_MS came from
 * a clock far ahead (a host whose clock jumped) or from something that is not a dispatcher or
 * scheduler. Waiting for it would hold every record behind it in the partition — due retries,
 * and ones whose window is ending — until then (a year, say): it is taken as due now instead.
 */
export function verdict(record: Pick<RetryRecord, 'dueAt' | 'delivery'>, ladder: RetryLadder, now: number, tierDelayMs: number): Verdict {
  const { firstAttemptAt } = record.delivery;
  const deadline = firstAttemptAt === null ? undefined : firstAttemptAt + ladder.windowMs;
  // Waiting for a retry that can only come after the window would hold the partition for nothing.
  if (deadline !== undefined && isPastWindow(ladder, firstAttemptAt, record.dueAt)) return { kind: 'expire', deadline };
  const dueAt = record.dueAt - now > tierDelayMs + MAX_DUE_AHEAD_SKEW_MS ? now : record.dueAt;
  if (now < dueAt) return { kind: 'wait', until: dueAt };
  if (deadline !== undefined && isPastWindow(ladder, firstAttemptAt, now)) return { kind: 'expire', deadline };
  return { kind: 'release', lateByMs: now - dueAt };
}

/** One record of a fetched batch; `record` is undefined when it could not be read. */
export interface BatchEntry {
  offset: string;
  record: RetryRecord | undefined;
}

export type Step =
  | { kind: 'release'; offset: string; record: RetryRecord; lateByMs: number }
  | { kind: 'expire'; offset: string; record: RetryRecord; deadline: number }
  | { kind: 'skip'; offset: string };

export interface PartitionPlan {
  /** What to do with the records before the first one that is not due, in offset order. */
  steps: Step[];
  /** The first record not due yet: the partition pauses here until `until`. */
  hold?: { offset: string; until: number };
}

export function planPartition(entries: readonly BatchEntry[], ladder: RetryLadder, now: number, tierDelayMs: number): PartitionPlan {
  const steps: Step[] = [];
  for (const { offset, record } of entries) {
    if (!record) {
      steps.push({ kind: 'skip', offset });
      continue;
    }
    const decision = verdict(record, ladder, now, tierDelayMs);
    if (decision.kind === 'wait') return { steps, hold: { offset, until: decision.until } };
    steps.push(decision.kind === 'release' ? { kind: 'release', offset, record, lateByMs: decision.lateByMs } : { kind: 'expire', offset, record, deadline: decision.deadline });
  }
  return { steps };
}

/** Bounds of a tier consumer's fetch wait (`tierFetchWaitMs`). */
export const MIN_TIER_FETCH_WAIT_MS = 20;
export const MAX_TIER_FETCH_WAIT_MS = 1_000;

/**
 * How long a tier consumer's fetch waits at the broker when nothing is there. A partition
 * resumed at its head's due time is fetched only once the fetch in flight (or kafkajs's sleep
 * while every partition is paused) ends, so a release can be up to this late; an idle consumer
 * makes one fetch per wait. A twentieth of the tier's delay keeps the lateness within 5 % of
 * the delay it adds to (10 s tier: 0.5 s; 1 min and more: 1 s), while an idle tier costs one or
 * two fetches a second instead of twenty. Millisecond ladders in tests get the 20 ms floor.
 */
export function tierFetchWaitMs(tierDelayMs: number): number {
  return Math.min(MAX_TIER_FETCH_WAIT_MS, Math.max(MIN_TIER_FETCH_WAIT_MS, Math.round(tierDelayMs / 20)));
}

/** How long the resume timer of a paused partition waits. */
export function resumeDelay(until: number, now: number): number {
  return Math.min(Math.max(0, until - now), MAX_TIMER_MS);
}

/** Age in seconds of the oldest record held at the head of a paused partition (0 when none). */
export function oldestHeadAgeSeconds(writtenAt: Iterable<number>, now: number): number {
  let oldest: number | undefined;
  for (const time of writtenAt) oldest = oldest === undefined ? time : Math.min(oldest, time);
  return oldest === undefined ? 0 : Math.max(0, now - oldest) / 1000;
}

/**
 * Splits the steps of a partition into transactions of at most `maxRecords` records and
 * `maxBytes` bytes (the broker refuses a record batch over 1 MiB by default); a larger
 * record travels alone.
 */
export function transactionChunks<T extends { bytes: number }>(items: readonly T[], maxRecords: number, maxBytes: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length >= maxRecords || bytes + item.bytes > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export type ReleaseTarget = { kind: 'lane' } | { kind: 'defer'; deferral: Deferral };

const TO_LANE: ReleaseTarget = { kind: 'lane' };

/**
 * Where a due record goes: the retry lane, or — when every dispatcher has its destination's
 * circuit open until `openUntil` (shared `circuitOpenUntil`) — back up the ladder, the same
 * deferral a dispatcher would make after reading it (shared `deferral`: no attempt counted,
 * waiting on the longest tier back by the time the circuit lets probes through, `expired` when
 * none fits in the window). A destination down for an hour is then carried by the scheduler
 * alone, without a read, decode and write per waiting delivery in the dispatchers.
 */
export function releaseTarget(record: RetryRecord, openUntil: number | undefined, ladder: RetryLadder, now: number): ReleaseTarget {
  if (openUntil === undefined) return TO_LANE;
  return { kind: 'defer', deferral: deferral(record.delivery, 'circuit_open', ladder, now, openUntil) };
}

/**
 * Tier topics of the namespace whose tier the ladder does not have: left by an earlier
 * RETRY_LADDER (a tier taken out of it), or written by a service given another one. Their records
 * still wait to be released or expired, and no consumer of this ladder reads them: served like
 * any tier, or they would wait there for ever. `retryTier` is `topics.retryTier`; only canonical
 * labels (`formatDuration`) count, so a topic that only looks like a tier is left alone.
 */
export function strayTiers(topicNames: Iterable<string>, retryTier: (topic: string) => string | undefined, ladderTiers: readonly string[]): string[] {
  const known = new Set(ladderTiers);
  const stray: string[] = [];
  for (const name of topicNames) {
    const label = retryTier(name);
    if (label === undefined || known.has(label)) continue;
    let delayMs: number;
    try {
      delayMs = parseDuration(label);
    } catch {
      continue;
    }
    if (delayMs > 0 && formatDuration(delayMs) === label) stray.push(label);
  }
  return stray.sort((a, b) => parseDuration(a) - parseDuration(b));
}
