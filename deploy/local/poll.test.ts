import { describe, expect, it } from 'vitest';
import { PollAbortedError, PollTimeoutError, pollUntil } from './poll.js';

/** A fake clock: sleeping advances time instantly. */
function fakeClock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = 0;
  return { now: () => t, sleep: async (ms) => void (t += ms) };
}

describe('pollUntil', () => {
  it('returns the first defined value, treating throws as "not yet"', async () => {
    let calls = 0;
    const value = await pollUntil(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('ECONNREFUSED');
        return calls === 3 ? 'up' : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, ...fakeClock() },
    );
    expect(value).toBe('up');
    expect(calls).toBe(3);
  });

  it('times out with the last error in the message', async () => {
    await expect(
      pollUntil(
        async () => {
          throw new Error('connection refused');
        },
        { timeoutMs: 1_000, intervalMs: 300, ...fakeClock() },
      ),
    ).rejects.toThrow(PollTimeoutError);
    await expect(
      pollUntil(
        async () => {
          throw new Error('connection refused');
        },
        { timeoutMs: 1_000, intervalMs: 300, ...fakeClock() },
      ),
    ).rejects.toThrow(/connection refused/);
  });

  it('stops early when the abort reason appears', async () => {
    let exited = false;
    const attempt = pollUntil(
      async () => {
        exited = true;
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, abortReason: () => (exited ? 'process exited (code 1)' : undefined), ...fakeClock() },
    );
    await expect(attempt).rejects.toThrow(PollAbortedError);
    await expect(attempt).rejects.toThrow('process exited (code 1)');
  });
});
