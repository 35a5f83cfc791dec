import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from './histogram.js';
import { busiestDuring, cpuInterval, slowestCell, slowestSeconds, type CpuInterval, type SecondWindow } from './slowest-seconds.js';

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

describe('busiestDuring', () => {
  const intervals: CpuInterval[] = [
    { fromMs: 0, toMs: 1_000, cores: { router: 0.2, dispatcher: 0.1, broker: 0.3 } },
    { fromMs: 1_000, toMs: 2_000, cores: { router: 0.9, dispatcher: 0.1, broker: 0.5 } },
    { fromMs: 2_000, toMs: 3_000, cores: { router: 0.1, dispatcher: 0.8, broker: 0.2 } },
  ];

  it('weights each interval by its overlap, busiest first', () => {
    // Half of the first interval and all of the second: router (0.1 + 0.9) / 1.5 s.
    const busiest = busiestDuring(intervals, 500, 2_000, 2);
    expect(busiest.map(({ name }) => name)).toEqual(['router', 'broker']);
    expect(busiest[0]!.cores).toBeCloseTo((0.2 * 500 + 0.9 * 1000) / 1500);
    expect(busiest[1]!.cores).toBeCloseTo((0.3 * 500 + 0.5 * 1000) / 1500);
  });

  it('has nothing to say about a time no interval covers', () => {
    expect(busiestDuring(intervals, 5_000, 6_000)).toEqual([]);
  });

  it('is attached to the slowest seconds, widened back by their slowest latency, and shown in the cell', () => {
    const slowest = slowestSeconds([windowOf(2_000, [900])], 0, 3_000, 1, intervals);
    // Arrivals in [2,000, 3,000) up to 900 ms late: the CPU of [1,100, 3,000).
    expect(slowest[0]!.busiest!.map(({ name }) => name)).toEqual(['router', 'dispatcher', 'broker']);
    expect(slowestCell(slowest)).toBe(`+2 s: 900 ms (${slowest[0]!.busiest!.map(({ name, cores }) => `${name} ${cores.toFixed(2)}`).join(', ')})`);
  });
});

describe('cpuInterval', () => {
  it('is each process’s CPU between two samples, in cores; a process in one sample only is left out', () => {
    const from = { at: 10_000, sample: new Map([['router', { cpuSeconds: 4 }], ['gone', { cpuSeconds: 1 }]]) };
    const to = { at: 12_000, sample: new Map([['router', { cpuSeconds: 5.5 }], ['new', { cpuSeconds: 3 }]]) };
    expect(cpuInterval(from, to)).toEqual({ fromMs: 10_000, toMs: 12_000, cores: { router: 0.75 } });
  });
});
