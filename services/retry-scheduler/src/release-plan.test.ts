import { describe, expect, it } from 'vitest';
import { topicNames, type Delivery, type RetryRecord } from '@tributary/schemas';
import type { RetryLadder } from '@tributary/shared';
import { MAX_DUE_AHEAD_SKEW_MS, MAX_TIMER_MS, oldestHeadAgeSeconds, planPartition, releaseTarget, resumeDelay, strayTiers, tierFetchWaitMs, transactionChunks, verdict, type BatchEntry } from './release-plan.js';

const ladder: RetryLadder = { delaysMs: [1_000, 5_000], windowMs: 60_000 };
const FIRST = 1_000_000;
/** The delay of the tier the records are on. */
const TIER_MS = 1_000;

const delivery = (firstAttemptAt: number | null = FIRST): Delivery => ({
  deliveryId: 'd/m',
  destinationId: 'd',
  sourceId: 's',
  messageId: 'm',
  messageType: 'track',
  userId: null,
  anonymousId: null,
  body: Buffer.from('{}'),
  receivedAt: FIRST - 10,
  routedAt: FIRST - 5,
  attempts: 1,
  firstAttemptAt,
  lastError: 'HTTP 503',
  lastStatus: 503,
  replays: 0,
});

const retry = (dueAt: number, firstAttemptAt: number | null = FIRST): RetryRecord => ({ delivery: delivery(firstAttemptAt), dueAt, tier: '1s' });

describe('verdict', () => {
  it('waits until the due time, to the millisecond', () => {
    expect(verdict(retry(FIRST + 1_000), ladder, FIRST + 999, TIER_MS)).toEqual({ kind: 'wait', until: FIRST + 1_000 });
    expect(verdict(retry(FIRST + 1_000), ladder, FIRST + 1_000, TIER_MS)).toEqual({ kind: 'release', lateByMs: 0 });
    expect(verdict(retry(FIRST + 1_000), ladder, FIRST + 1_250, TIER_MS)).toEqual({ kind: 'release', lateByMs: 250 });
  });

  it('releases a record that is due exactly at the end of the window, and expires it one millisecond later', () => {
    const end = FIRST + ladder.windowMs;
    expect(verdict(retry(end), ladder, end, TIER_MS)).toEqual({ kind: 'release', lateByMs: 0 });
    expect(verdict(retry(end), ladder, end + 1, TIER_MS)).toEqual({ kind: 'expire', deadline: end });
  });

  it('expires at once a record due after the window, without waiting for it', () => {
    expect(verdict(retry(FIRST + ladder.windowMs + 1), ladder, FIRST + 2_000, TIER_MS)).toEqual({ kind: 'expire', deadline: FIRST + ladder.windowMs });
  });

  it('expires a record released late past the window (the scheduler was down)', () => {
    expect(verdict(retry(FIRST + 30_000), ladder, FIRST + 61_000, TIER_MS)).toEqual({ kind: 'expire', deadline: FIRST + 60_000 });
  });

  it('waits for a due time up to the tier delay and the allowed skew ahead, and takes one further ahead as due now', () => {
    const now = FIRST;
    const furthest = now + TIER_MS + MAX_DUE_AHEAD_SKEW_MS;
    expect(verdict(retry(furthest, null), ladder, now, TIER_MS)).toEqual({ kind: 'wait', until: furthest });
    // A clock a day ahead, or a record nobody's clock wrote: it would hold the partition until then.
    expect(verdict(retry(furthest + 1, null), ladder, now, TIER_MS)).toEqual({ kind: 'release', lateByMs: 0 });
    expect(verdict(retry(Date.UTC(2100, 0, 1), null), ladder, now, TIER_MS)).toEqual({ kind: 'release', lateByMs: 0 });
    // With a window, a due time past it expires, as before.
    expect(verdict(retry(Date.UTC(2100, 0, 1)), ladder, now, TIER_MS)).toEqual({ kind: 'expire', deadline: FIRST + ladder.windowMs });
  });

  it('has no window for a delivery deferred before its first attempt', () => {
    expect(verdict(retry(FIRST + 500, null), ladder, FIRST + 10 * ladder.windowMs, TIER_MS)).toEqual({ kind: 'release', lateByMs: 10 * ladder.windowMs - 500 });
  });
});

describe('planPartition', () => {
  const entry = (offset: number, record: RetryRecord | undefined): BatchEntry => ({ offset: String(offset), record });

  it('handles the due prefix and holds at the first record not due', () => {
    const now = FIRST + 5_000;
    const plan = planPartition(
      [entry(10, retry(FIRST + 1_000)), entry(11, undefined), entry(12, retry(FIRST + 70_000)), entry(13, retry(FIRST + 6_000)), entry(14, retry(FIRST + 2_000))],
      ladder,
      now,
      TIER_MS,
    );
    expect(plan.steps.map((step) => [step.kind, step.offset])).toEqual([
      ['release', '10'],
      ['skip', '11'],
      ['expire', '12'],
    ]);
    // Offset 14 is due, but never overtakes the head that is not.
    expect(plan.hold).toEqual({ offset: '13', until: FIRST + 6_000 });
  });

  it('releases everything when all is due, and holds nothing', () => {
    const plan = planPartition([entry(0, retry(FIRST)), entry(1, retry(FIRST + 1))], ladder, FIRST + 1, TIER_MS);
    expect(plan.steps.map((step) => step.kind)).toEqual(['release', 'release']);
    expect(plan.hold).toBeUndefined();
  });

  it('holds at the very first record without any step', () => {
    expect(planPartition([entry(5, retry(FIRST + 9_000))], ladder, FIRST, TIER_MS)).toEqual({ steps: [], hold: { offset: '5', until: FIRST + 9_000 } });
  });
});

describe('resumeDelay', () => {
  it('waits the remaining time, never negative, never beyond the timer limit', () => {
    expect(resumeDelay(1_500, 1_000)).toBe(500);
    expect(resumeDelay(1_000, 1_500)).toBe(0);
    expect(resumeDelay(Number.MAX_SAFE_INTEGER, 0)).toBe(MAX_TIMER_MS);
  });
});

describe('oldestHeadAgeSeconds', () => {
  it('is the age of the oldest held head, 0 when nothing is held', () => {
    expect(oldestHeadAgeSeconds([9_000, 4_000, 7_000], 10_000)).toBe(6);
    expect(oldestHeadAgeSeconds([], 10_000)).toBe(0);
  });
});

describe('transactionChunks', () => {
  const item = (bytes: number) => ({ bytes });

  it('bounds records and bytes per transaction; an oversized record goes alone', () => {
    const sizes = (chunks: Array<Array<{ bytes: number }>>) => chunks.map((chunk) => chunk.map((entry) => entry.bytes));
    expect(sizes(transactionChunks([1, 1, 1, 1, 1].map(item), 2, 100))).toEqual([[1, 1], [1, 1], [1]]);
    expect(sizes(transactionChunks([40, 40, 40, 500, 10].map(item), 10, 100))).toEqual([[40, 40], [40], [500], [10]]);
    expect(transactionChunks([], 10, 100)).toEqual([]);
  });
});

describe('tierFetchWaitMs', () => {
  it('is a twentieth of the tier delay, between 20 ms and 1 s', () => {
    expect(tierFetchWaitMs(10_000)).toBe(500);
    expect(tierFetchWaitMs(60_000)).toBe(1_000);
    expect(tierFetchWaitMs(3_600_000)).toBe(1_000);
    expect(tierFetchWaitMs(100)).toBe(20);
    expect(tierFetchWaitMs(1_000)).toBe(50);
  });
});

describe('releaseTarget', () => {
  it('releases a due record to the retry lane unless its circuit is open at every dispatcher', () => {
    expect(releaseTarget(retry(FIRST + 1_000), undefined, ladder, FIRST + 1_000)).toEqual({ kind: 'lane' });
  });

  it('defers a due record of a circuit open everywhere up the ladder, keeping its attempts and last real error', () => {
    const now = FIRST + 1_000;
    expect(releaseTarget(retry(now), now + 30_000, ladder, now)).toEqual({
      kind: 'defer',
      deferral: {
        kind: 'retry',
        record: { delivery: { ...delivery(), lastError: 'deferred: circuit open; last error: HTTP 503' }, dueAt: now + 5_000, tier: '5s' },
      },
    });
  });

  it('expires a due record of a circuit open everywhere when no further wait fits in the window', () => {
    const now = FIRST + 59_500;
    expect(releaseTarget(retry(now), now + 30_000, ladder, now)).toMatchObject({ kind: 'defer', deferral: { kind: 'dead', letter: { reason: 'expired' } } });
  });

  it('gives it a last wait on a shorter tier when its step no longer fits but that one does (planLastWait)', () => {
    const now = FIRST + 58_000;
    expect(releaseTarget(retry(now), now + 30_000, ladder, now)).toMatchObject({ kind: 'defer', deferral: { kind: 'retry', record: { tier: '1s', dueAt: now + 1_000 } } });
  });
});

describe('strayTiers', () => {
  const { retryTier } = topicNames('acme');

  it('finds the namespace’s tier topics the ladder does not have, shortest first', () => {
    const names = ['acme.retry.10s.v1', 'acme.retry.2h.v1', 'acme.retry.1m.v1', 'acme.retry.30s.v1', 'acme.deliveries.v1', 'other.retry.5m.v1'];
    expect(strayTiers(names, retryTier, ['10s', '1m'])).toEqual(['30s', '2h']);
  });

  it('leaves alone what only looks like a tier topic', () => {
    const names = ['acme.retry..v1', 'acme.retry.soon.v1', 'acme.retry.60s.v1', 'acme.retry.0ms.v1', 'acme.retry.1m.v2'];
    expect(strayTiers(names, retryTier, [])).toEqual([]);
  });
});
