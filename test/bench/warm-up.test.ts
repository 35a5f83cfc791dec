import { describe, expect, it } from 'vitest';
import { lastWindowShare, warmupVerdict, type JitSample } from './warm-up.js';

/** One sample every 5 s, the compilers using `share` of a core in each interval. */
function samples(shares: readonly number[]): JitSample[] {
  const out: JitSample[] = [{ atSeconds: 0, jitSeconds: 0 }];
  for (const share of shares) {
    const last = out.at(-1)!;
    out.push({ atSeconds: last.atSeconds + 5, jitSeconds: last.jitSeconds + share * 5 });
  }
  return out;
}

describe('lastWindowShare', () => {
  it('is the share of a core over the last 30 s', () => {
    expect(lastWindowShare(samples([0.5, 0.5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]))).toBeCloseTo(0.1);
  });

  it('is undefined before a full window', () => {
    expect(lastWindowShare(samples([0.5, 0.5, 0.5]))).toBeUndefined();
    expect(lastWindowShare([])).toBeUndefined();
  });
});

describe('warmupVerdict', () => {
  it('goes on for the minimum however quiet the compilers', () => {
    expect(warmupVerdict(samples(Array(8).fill(0)), 60, 300)).toEqual({ done: false });
  });

  it('ends once the compilers used under 1 % of a core over the last 30 s', () => {
    const quiet = samples([...Array(12).fill(0.3), ...Array(6).fill(0.005)]);
    expect(warmupVerdict(quiet, 30, 300)).toEqual({ done: true, reason: 'warm', jitCoreShare: expect.closeTo(0.005, 5) });
  });

  it('goes on while they still compile', () => {
    expect(warmupVerdict(samples([...Array(12).fill(0.3), ...Array(5).fill(0.005), 0.2]), 30, 300)).toEqual({ done: false });
  });

  it('gives up at the maximum and says how busy the compilers still were', () => {
    const verdict = warmupVerdict(samples(Array(60).fill(0.05)), 30, 300);
    expect(verdict).toEqual({ done: true, reason: 'limit', jitCoreShare: expect.closeTo(0.05, 5) });
  });

  it('with the maximum at the minimum, is the fixed warm-up of before', () => {
    expect(warmupVerdict(samples(Array(6).fill(0.5)), 30, 30)).toEqual({ done: true, reason: 'limit', jitCoreShare: expect.closeTo(0.5, 5) });
  });
});
