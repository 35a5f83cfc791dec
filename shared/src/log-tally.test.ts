import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from './logger.js';
import { LogTally } from './log-tally.js';

function tally(intervalMs = 10_000, budget?: number): { tally: LogTally; lines: Array<{ fields: Record<string, unknown>; message: string }> } {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  // LogTally writes through `info` only; the rest of pino's interface is not needed here.
  const logger = { info: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }) } as unknown as Logger;
  return {
    tally: new LogTally({ logger, message: 'retries expired', context: { tier: '10s' }, keyField: 'destinationId', intervalMs, budget }),
    lines,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LogTally', () => {
  it('logs one line per key with its count and the context, then starts from zero', () => {
    const { tally: expired, lines } = tally();
    for (let index = 0; index < 9_812; index++) expired.count('dead-hook');
    expired.count('flaky', 3);
    expired.flush();
    expect(lines).toEqual([
      { fields: { tier: '10s', destinationId: 'dead-hook', count: 9_812, notLogged: 9_812, intervalMs: 10_000 }, message: 'retries expired' },
      { fields: { tier: '10s', destinationId: 'flaky', count: 3, notLogged: 3, intervalMs: 10_000 }, message: 'retries expired' },
    ]);
    expired.flush();
    expect(lines).toHaveLength(2);
  });

  it('flushes every interval once started, and what is left when stopped', () => {
    vi.useFakeTimers();
    const { tally: expired, lines } = tally(1_000);
    expired.start();
    expired.count('a');
    vi.advanceTimersByTime(999);
    expect(lines).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(lines.map(({ fields }) => fields.count)).toEqual([1]);
    vi.advanceTimersByTime(5_000);
    expect(lines).toHaveLength(1);
    expired.count('b', 2);
    expired.stop();
    expect(lines.map(({ fields }) => [fields.destinationId, fields.count])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expired.count('c');
    vi.advanceTimersByTime(5_000);
    expect(lines).toHaveLength(2);
  });

  it('with a budget, lets the first events of each key be logged one by one and sums up only the rest', () => {
    const { tally: failures, lines } = tally(10_000, 2);
    expect([failures.count('a'), failures.count('a'), failures.count('a'), failures.count('b')]).toEqual([true, true, false, true]);
    failures.flush();
    expect(lines.map(({ fields }) => fields)).toEqual([{ tier: '10s', destinationId: 'a', count: 3, notLogged: 1, intervalMs: 10_000 }]);
    expect(failures.count('a')).toBe(true);
  });
});
