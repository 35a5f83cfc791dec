import { describe, expect, it } from 'vitest';
import { bucketBounds, bucketOf, LatencyHistogram } from './histogram.js';

/** Nearest-rank percentile of raw samples, the definition the histogram approximates. */
function exactPercentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

describe('buckets', () => {
  it('are exact below 128 µs and contiguous above, each value inside its own bucket', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(127)).toBe(127);
    let previousHigh = 127;
    for (let bucket = 128; bucket <= bucketOf(0xffff_ffff); bucket++) {
      const [low, high] = bucketBounds(bucket);
      expect(low).toBe(previousHigh + 1);
      expect(bucketOf(low)).toBe(bucket);
      expect(bucketOf(high)).toBe(bucket);
      // Width at most 1/64 of the lower bound: the precision the percentiles promise.
      expect((high - low + 1) / low).toBeLessThanOrEqual(1 / 64);
      previousHigh = high;
    }
  });

  it('counts values beyond the range at its top instead of failing', () => {
    expect(bucketOf(1e12)).toBe(bucketOf(0xffff_ffff));
    expect(bucketOf(-5)).toBe(0);
  });
});

describe('LatencyHistogram', () => {
  it('gives percentiles within 1 % of the exact ones, and the exact maximum', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    // A long-tailed mix: most around 20 ms, some around 400 ms, a few seconds.
    const samples = Array.from({ length: 20_000 }, () => {
      const r = random();
      return r < 0.9 ? 10 + random() * 20 : r < 0.99 ? 200 + random() * 400 : 1000 + random() * 4000;
    });
    const histogram = new LatencyHistogram();
    for (const sample of samples) histogram.record(sample);
    for (const p of [50, 95, 99, 99.9]) {
      const exact = exactPercentile(samples, p);
      expect(Math.abs(histogram.percentile(p) - exact) / exact).toBeLessThan(0.01);
    }
    expect(histogram.percentile(100)).toBe(Math.max(...samples));
    expect(histogram.summary().maxMs).toBe(Math.max(...samples));
    expect(histogram.summary().meanMs).toBeCloseTo(samples.reduce((a, b) => a + b, 0) / samples.length, 6);
  });

  it('keeps sub-millisecond values to the microsecond', () => {
    const histogram = new LatencyHistogram();
    histogram.record(0.05);
    histogram.record(0.12);
    expect(histogram.percentile(50)).toBeCloseTo(0.05, 6);
    expect(histogram.percentile(100)).toBeCloseTo(0.12, 6);
  });

  it('merges windows into the same totals as recording everything in one', () => {
    const all = new LatencyHistogram();
    const windows = [new LatencyHistogram(), new LatencyHistogram(), new LatencyHistogram()];
    for (let i = 0; i < 3000; i++) {
      const value = 1 + ((i * 37) % 977);
      all.record(value);
      windows[i % 3]!.record(value);
    }
    // Through JSON, as the windows travel between processes.
    const merged = new LatencyHistogram();
    for (const window of windows) merged.merge(JSON.parse(JSON.stringify(window.toJSON())));
    expect(merged.toJSON()).toEqual(all.toJSON());
    expect(merged.summary()).toEqual(all.summary());
  });

  it('reports an empty histogram as NaN, not zero', () => {
    const summary = new LatencyHistogram().summary();
    expect(summary.count).toBe(0);
    expect(summary.p99Ms).toBeNaN();
    expect(summary.maxMs).toBeNaN();
    expect(new LatencyHistogram().merge(new LatencyHistogram()).summary().p50Ms).toBeNaN();
  });

  it('records a negative or non-finite sample (clock step) as zero', () => {
    const histogram = new LatencyHistogram();
    histogram.record(-3);
    histogram.record(Number.NaN);
    expect(histogram.count).toBe(2);
    expect(histogram.percentile(100)).toBe(0);
  });
});
