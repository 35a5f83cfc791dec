import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from './histogram.js';
import { slowestCell, slowestSeconds, type SecondWindow } from './slowest-seconds.js';

const windowOf = (fromMs: number, samples: number[]): SecondWindow => {
  const histogram = new LatencyHistogram();
  for (const sample of samples) histogram.record(sample);
  return { fromMs, toMs: fromMs + 1000, latency: histogram.toJSON() };
};

describe('slowestSeconds', () => {
  const windows = [windowOf(9_000, [900]), windowOf(10_000, [20, 30]), windowOf(11_000, [40, 650]), windowOf(12_000, []), windowOf(13_000, [100]), windowOf(20_000, [5_000])];

  it('ranks the windows of the phase by their maximum, with their offset from its start', () => {
    const slowest = slowestSeconds(windows, 10_000, 20_000, 2);
    expect(slowest.map((second) => [second.atSeconds, second.events, second.maxMs])).toEqual([
      [1, 2, 650],
      [3, 1, 100],
    ]);
  });

  it('leaves out windows outside the phase and windows without arrivals', () => {
    expect(slowestSeconds(windows, 10_000, 20_000, 10).map((second) => second.atSeconds)).toEqual([1, 3, 0]);
  });

  it('formats the slowest first', () => {
    expect(slowestCell(slowestSeconds(windows, 10_000, 20_000, 2))).toBe('+1 s: 650 ms, +3 s: 100 ms');
    expect(slowestCell([])).toBe('–');
    expect(slowestCell(undefined)).toBe('–');
  });
});
