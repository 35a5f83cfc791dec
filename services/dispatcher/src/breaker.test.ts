import { describe, expect, it } from 'vitest';
import { CircuitBreaker, DEFAULT_BREAKER, type BreakerSettings } from './breaker.js';

const settings: BreakerSettings = { ...DEFAULT_BREAKER, consecutiveFailures: 3, minRequests: 10, failureRatio: 0.5, windowMs: 10_000, openMs: 1_000, maxOpenMs: 8_000, probes: 2, probeTimeoutMs: 5_000 };
const failure = { kind: 'failure', error: 'HTTP 503' } as const;
const success = { kind: 'success' } as const;

function failTimes(breaker: CircuitBreaker, times: number, now: number): void {
  for (let n = 0; n < times; n++) {
    expect(breaker.admit(now)).toBe('attempt');
    breaker.record(failure, false, now);
  }
}

describe('CircuitBreaker', () => {
  it('opens after a run of retryable failures and defers until the cool-down ends', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 2, 100);
    expect(breaker.current).toBe('closed');
    breaker.record(failure, false, 100);
    expect(breaker.current).toBe('open');
    expect(breaker.snapshot(100)).toMatchObject({ state: 'open', stateSince: 100, openUntil: 1_100, openings: 1, consecutiveFailures: 3, lastError: 'HTTP 503' });
    expect(breaker.admit(500)).toBe('defer');
    expect(breaker.admit(1_099)).toBe('defer');
  });

  it('tells until when it is open, and nothing once it lets probes through', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 3, 100);
    expect(breaker.probesAt(500)).toBe(1_100);
    expect(breaker.admit(1_100)).toBe('probe');
    expect(breaker.probesAt(1_100)).toBeNull();
    expect(new CircuitBreaker(settings, 0).probesAt(0)).toBeNull();
  });

  it('a success in between resets the run', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 2, 100);
    breaker.record(success, false, 100);
    failTimes(breaker, 2, 100);
    expect(breaker.current).toBe('closed');
  });

  it('opens on a high failure ratio over the window even without a long run', () => {
    const breaker = new CircuitBreaker(settings, 0);
    for (let n = 0; n < 10; n++) {
      breaker.admit(1_000 + n);
      breaker.record(n % 2 === 1 ? failure : success, false, 1_000 + n);
    }
    expect(breaker.current).toBe('open');
  });

  it('closed again by a probe, starts its window afresh: one failure does not re-open it on the old ratio', () => {
    const breaker = new CircuitBreaker(settings, 0);
    for (let n = 0; n < 10; n++) {
      breaker.admit(1_000 + n);
      breaker.record(n % 2 === 1 ? failure : success, false, 1_000 + n);
    }
    expect(breaker.current).toBe('open');
    expect(breaker.admit(3_000)).toBe('probe');
    breaker.record(success, true, 3_000);
    expect(breaker.current).toBe('closed');
    expect(breaker.admit(3_001)).toBe('attempt');
    breaker.record(failure, false, 3_001);
    expect(breaker.current).toBe('closed');
    expect(breaker.snapshot(3_001)).toMatchObject({ windowRequests: 1, windowFailures: 1 });
  });

  it('forgets failures that fell out of the window', () => {
    const breaker = new CircuitBreaker(settings, 0);
    for (let n = 0; n < 5; n++) breaker.record(n % 2 === 0 ? failure : success, false, 1_000);
    // 20 s later the old failures no longer count: 9 successes and 1 failure is a 10 % ratio.
    for (let n = 0; n < 9; n++) breaker.record(success, false, 21_000);
    breaker.record(failure, false, 21_000);
    expect(breaker.current).toBe('closed');
    expect(breaker.snapshot(21_000)).toMatchObject({ windowRequests: 10, windowFailures: 1 });
    expect(breaker.isQuiet(40_000)).toBe(false);
    breaker.record(success, false, 40_000);
    expect(breaker.isQuiet(60_000)).toBe(true);
  });

  it('half-open lets a few probes through; a successful probe closes the circuit', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 3, 0);
    expect(breaker.admit(1_000)).toBe('probe');
    expect(breaker.current).toBe('half_open');
    expect(breaker.admit(1_001)).toBe('probe');
    expect(breaker.admit(1_002)).toBe('defer');
    breaker.record(success, true, 1_050);
    expect(breaker.current).toBe('closed');
    expect(breaker.snapshot(1_050)).toMatchObject({ state: 'closed', openings: 0, consecutiveFailures: 0, lastSuccessAt: 1_050 });
    expect(breaker.admit(1_051)).toBe('attempt');
  });

  it('a failed probe opens again for twice as long, up to the bound', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 3, 0);
    let now = 0;
    const coolDowns: number[] = [];
    for (let round = 0; round < 5; round++) {
      now = breaker.snapshot(now).openUntil!;
      expect(breaker.admit(now)).toBe('probe');
      breaker.record(failure, true, now);
      coolDowns.push(breaker.snapshot(now).openUntil! - now);
    }
    expect(coolDowns).toEqual([2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it('a straggler that fails while half-open does not re-open; only probes decide', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 3, 0);
    expect(breaker.admit(1_000)).toBe('probe');
    breaker.record(failure, false, 1_001);
    expect(breaker.current).toBe('half_open');
  });

  it('honours Retry-After: a closed circuit pauses for exactly that long, an open one for at least that long', () => {
    const breaker = new CircuitBreaker(settings, 0);
    breaker.admit(0);
    breaker.record({ kind: 'failure', error: 'HTTP 429', retryAfterMs: 3_000 }, false, 0);
    expect(breaker.snapshot(0)).toMatchObject({ state: 'open', openUntil: 3_000, openings: 0 });
    expect(breaker.admit(2_999)).toBe('defer');
    expect(breaker.admit(3_000)).toBe('probe');
    breaker.record({ kind: 'failure', error: 'HTTP 503', retryAfterMs: 60_000 }, true, 3_000);
    // Bounded by maxOpenMs (8 s), not the 60 s asked.
    expect(breaker.snapshot(3_000).openUntil).toBe(11_000);
  });

  it('a cancelled probe frees its place', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 3, 0);
    expect(breaker.admit(1_000)).toBe('probe');
    expect(breaker.admit(1_000)).toBe('probe');
    breaker.cancelProbe();
    expect(breaker.admit(1_000)).toBe('probe');
  });

  it('lets probes through again when every one is out and none was heard of within probeTimeoutMs', () => {
    const breaker = new CircuitBreaker(settings, 0);
    failTimes(breaker, 3, 0);
    expect(breaker.admit(1_000)).toBe('probe');
    expect(breaker.admit(1_100)).toBe('probe');
    // Slow is not lost: up to probeTimeoutMs after the last probe, the others are deferred.
    expect(breaker.admit(6_100)).toBe('defer');
    expect(breaker.admit(6_101)).toBe('probe');
    expect(breaker.admit(6_102)).toBe('probe');
    expect(breaker.admit(6_103)).toBe('defer');
    expect(breaker.current).toBe('half_open');
    breaker.record(success, true, 6_200);
    expect(breaker.current).toBe('closed');
  });
});
