import { describe, expect, it } from 'vitest';
import type { ConfigView } from './config-view.js';
import { createLogger } from './logger.js';
import { ConfigFreshness } from './config-freshness.js';

/** A config view whose catch-ups the test resolves by hand, recording when each started. */
function fakeView() {
  const started: number[] = [];
  const pending: Array<() => void> = [];
  const view = {
    reader: {
      catchUpToEnd: () => {
        started.push(Date.now());
        return new Promise<void>((resolve) => pending.push(resolve));
      },
    },
  } as unknown as ConfigView;
  return { view, started, finishNext: () => pending.shift()?.() };
}

const logger = createLogger({ service: 'test', level: 'silent' });
const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

describe('ConfigFreshness', () => {
  it('shares one catch-up among deliveries read before it started', async () => {
    const { view, started, finishNext } = fakeView();
    const freshness = new ConfigFreshness({ view, logger, timeoutMs: 1000 });
    const readAt = Date.now();
    const first = freshness.caughtUpSince(readAt);
    await tick();
    const second = freshness.caughtUpSince(readAt);
    expect(started).toHaveLength(1);
    finishNext();
    await Promise.all([first, second]);
    // A finished check that started after the read still covers it.
    await freshness.caughtUpSince(readAt);
    expect(started).toHaveLength(1);
  });

  it('runs a new catch-up, one at a time, for deliveries read after the last one started', async () => {
    const { view, started, finishNext } = fakeView();
    const freshness = new ConfigFreshness({ view, logger, timeoutMs: 1000 });
    const first = freshness.caughtUpSince(Date.now());
    await tick();
    const laterA = freshness.caughtUpSince(Date.now());
    const laterB = freshness.caughtUpSince(Date.now());
    expect(started).toHaveLength(1);
    finishNext();
    await first;
    await tick();
    expect(started).toHaveLength(2);
    expect(started[1]!).toBeGreaterThanOrEqual(started[0]!);
    finishNext();
    await Promise.all([laterA, laterB]);
    expect(started).toHaveLength(2);
  });

  it('gives up quietly when the catch-up fails, so deliveries are not held', async () => {
    const view = { reader: { catchUpToEnd: () => Promise.reject(new Error('no broker')) } } as unknown as ConfigView;
    const freshness = new ConfigFreshness({ view, logger, timeoutMs: 1000 });
    await expect(freshness.caughtUpSince(Date.now())).resolves.toBeUndefined();
  });

  it('after a check that gave up, does not hold callers for the next one until a check succeeds again', async () => {
    const outcomes: Array<(failed: boolean) => void> = [];
    const view = {
      reader: { catchUpToEnd: () => new Promise<void>((resolve, reject) => outcomes.push((failed) => (failed ? reject(new Error('reader away')) : resolve()))) },
    } as unknown as ConfigView;
    const freshness = new ConfigFreshness({ view, logger, timeoutMs: 1000 });
    const first = freshness.caughtUpSince(Date.now());
    await tick();
    outcomes.shift()!(true);
    await first;
    // The reader is still away: a later decision starts a check but does not wait for it.
    let decided = false;
    void freshness.caughtUpSince(Date.now()).then(() => (decided = true));
    await tick();
    expect(decided).toBe(true);
    expect(outcomes).toHaveLength(1);
    outcomes.shift()!(false);
    await tick();
    // Confirmed current again: callers wait for their check as before.
    let waited = false;
    const again = freshness.caughtUpSince(Date.now() + 1).then(() => (waited = true));
    await tick();
    expect(waited).toBe(false);
    outcomes.shift()!(false);
    await again;
    expect(waited).toBe(true);
  });
});
