import { describe, expect, it } from 'vitest';
import { DEFAULT_LADDER, isPastWindow, ladderTiers, planLastWait, planRetry, planNoSoonerThan, planRetryAfter, validateLadder, type RetryLadder } from './retry-ladder.js';

const scaled: RetryLadder = { delaysMs: [100, 200, 400, 800, 1600], windowMs: 3000 };

describe('planRetry', () => {
  it('uses the delay of the attempt that failed and names its tier topic', () => {
    expect(planRetry(scaled, 1, 0, 0)).toEqual({ kind: 'retry', tier: '100ms', delayMs: 100, dueAt: 100 });
    expect(planRetry(scaled, 3, 0, 300)).toMatchObject({ kind: 'retry', tier: '400ms', dueAt: 700 });
  });

  it('repeats the last delay once the ladder is exhausted', () => {
    const ladder: RetryLadder = { delaysMs: [10_000, 3_600_000], windowMs: 4 * 3_600_000 };
    expect(planRetry(ladder, 7, 0, 10_000)).toMatchObject({ kind: 'retry', delayMs: 3_600_000 });
  });

  it('expires a retry that would fall outside the window', () => {
    expect(planRetry(scaled, 5, 0, 1500)).toEqual({ kind: 'expired', wouldBeDueAt: 3100, deadline: 3000 });
    // Exactly at the deadline is still inside.
    expect(planRetry(scaled, 5, 0, 1400)).toMatchObject({ kind: 'retry', dueAt: 3000 });
  });

  it('keeps every attempt of an always-failing delivery inside the window', () => {
    let now = 0;
    const attempts = [now];
    for (let made = 1; ; made++) {
      const plan = planRetry(scaled, made, 0, now + 10); // each attempt takes 10 ms
      if (plan.kind === 'expired') break;
      now = plan.dueAt;
      attempts.push(now);
    }
    expect(attempts).toEqual([0, 110, 320, 730, 1540]);
    expect(attempts.every((time) => time <= scaled.windowMs)).toBe(true);
  });
});

describe('planRetryAfter', () => {
  const ladder: RetryLadder = { delaysMs: [10_000, 60_000, 300_000, 3_600_000], windowMs: 4 * 3_600_000 };

  it('uses the smallest tier that waits at least as long as the receiver asked', () => {
    expect(planRetryAfter(ladder, 0, 0, 1_000)).toEqual({ kind: 'retry', tier: '10s', delayMs: 10_000, dueAt: 11_000 });
    expect(planRetryAfter(ladder, 10_000, 0, 1_000)).toMatchObject({ tier: '10s' });
    expect(planRetryAfter(ladder, 10_001, 0, 1_000)).toMatchObject({ tier: '1m', dueAt: 61_000 });
    expect(planRetryAfter(ladder, 120_000, 0, 1_000)).toMatchObject({ tier: '5m' });
  });

  it('is bounded by the longest tier', () => {
    expect(planRetryAfter(ladder, 86_400_000, 0, 0)).toMatchObject({ tier: '1h', dueAt: 3_600_000 });
  });

  it('never goes past the window', () => {
    expect(planRetryAfter(ladder, 300_000, 0, 4 * 3_600_000 - 60_000)).toEqual({ kind: 'expired', wouldBeDueAt: 4 * 3_600_000 + 240_000, deadline: 4 * 3_600_000 });
  });
});

describe('ladderTiers', () => {
  it('gives one tier per distinct delay, in ladder order', () => {
    const tiers = ladderTiers({ delaysMs: [10_000, 60_000, 3_600_000, 3_600_000], windowMs: 14_400_000 });
    expect(tiers.map((tier) => tier.label)).toEqual(['10s', '1m', '1h']);
  });
});

describe('validateLadder / isPastWindow', () => {
  it('refuses empty ladders and non-positive delays', () => {
    expect(() => validateLadder({ delaysMs: [], windowMs: 1 })).toThrow(/at least one/);
    expect(() => validateLadder({ delaysMs: [0], windowMs: 1 })).toThrow(/positive/);
  });
  it('tells when an attempt would be too late', () => {
    expect(isPastWindow(scaled, null, 10_000)).toBe(false);
    expect(isPastWindow(scaled, 0, 3000)).toBe(false);
    expect(isPastWindow(scaled, 0, 3001)).toBe(true);
  });
});

describe('planLastWait', () => {
  const T0 = 1_000_000;
  const left = (ms: number) => planLastWait(DEFAULT_LADDER, T0, T0 + DEFAULT_LADDER.windowMs - ms);
  it('takes the longest tier that fits in what is left, when it spends at least half of it', () => {
    expect(left(59 * 60_000)).toMatchObject({ kind: 'retry', tier: '30m', delayMs: 1_800_000 });
    expect(left(30 * 60_000)).toMatchObject({ tier: '30m' });
    expect(left(10 * 60_000)).toMatchObject({ tier: '5m' });
    expect(left(20_000)).toMatchObject({ tier: '10s' });
  });

  it('gives none when the longest that fits would be one of many ever shorter waits, or none fits', () => {
    expect(left(14 * 60_000)).toBeUndefined();
    expect(left(25_000)).toBeUndefined();
    expect(left(9_999)).toBeUndefined();
    expect(left(-1)).toBeUndefined();
  });
});

describe('planNoSoonerThan', () => {
  const ladder: RetryLadder = { delaysMs: [10_000, 60_000, 300_000, 900_000], windowMs: 3_600_000 };
  const tenSeconds = planRetry(ladder, 1, 0, 1_000);

  it('keeps the plan when it already comes back no sooner than asked', () => {
    expect(planNoSoonerThan(ladder, tenSeconds, 5_000, 0, 1_000)).toBe(tenSeconds);
    expect(planNoSoonerThan(ladder, tenSeconds, 11_000, 0, 1_000)).toBe(tenSeconds);
  });

  it('takes the longest tier that is back by then, never one past it', () => {
    expect(planNoSoonerThan(ladder, tenSeconds, 1_000 + 80_000, 0, 1_000)).toEqual({ kind: 'retry', tier: '1m', delayMs: 60_000, dueAt: 61_000 });
    expect(planNoSoonerThan(ladder, tenSeconds, 1_000 + 300_000, 0, 1_000)).toEqual({ kind: 'retry', tier: '5m', delayMs: 300_000, dueAt: 301_000 });
    // 59 s: no longer tier is back by then.
    expect(planNoSoonerThan(ladder, tenSeconds, 1_000 + 59_000, 0, 1_000)).toBe(tenSeconds);
  });

  it('stays inside the window', () => {
    const late = planRetry(ladder, 1, 0, 3_500_000);
    expect(planNoSoonerThan(ladder, late, 3_500_000 + 300_000, 0, 3_500_000)).toEqual({ kind: 'retry', tier: '1m', delayMs: 60_000, dueAt: 3_560_000 });
  });

  it('leaves an expired plan expired', () => {
    const expired = planRetry(ladder, 1, 0, 3_599_000);
    expect(expired.kind).toBe('expired');
    expect(planNoSoonerThan(ladder, expired, 3_599_000 + 300_000, 0, 3_599_000)).toBe(expired);
  });
});
