import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AdminError, ReplayInterrupted, type DeadLetterList, type DeadLetterPosition, type DeadLetterStore, type ReplayOptions, type ReplayOutcome } from '@tributary/shared';
import { AdminDeadLetters, interruptedReplayError, whileProgressing } from './dlq.js';

const TIMEOUT_MS = 1_000;

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Settles `promise` into a value or an error, so that fake time can run while nobody awaits it. */
function settled<T>(promise: Promise<T>): { result: () => { value?: T; error?: unknown } | undefined } {
  let result: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => (result = { value }),
    (error: unknown) => (result = { error }),
  );
  return { result: () => result };
}

/** Work that reports progress every `everyMs` and finishes after `totalMs`. */
function progressingWork(everyMs: number, totalMs: number) {
  return async (progress: () => void) => {
    for (let elapsed = 0; elapsed < totalMs; elapsed += everyMs) {
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      progress();
    }
    return 'done';
  };
}

describe('whileProgressing', () => {
  it('waits as long as the work moves on, however long that is', async () => {
    const waiting = settled(whileProgressing(progressingWork(TIMEOUT_MS - 100, 20 * TIMEOUT_MS), TIMEOUT_MS, 'the replay'));
    await vi.advanceTimersByTimeAsync(21 * TIMEOUT_MS);
    expect(waiting.result()).toEqual({ value: 'done' });
  });

  it('answers 503 once the work has made no progress for the timeout, from the start', async () => {
    const waiting = settled(whileProgressing(() => new Promise<never>(() => undefined), TIMEOUT_MS, 'the replay'));
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS - 1);
    expect(waiting.result()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const error = waiting.result()?.error as AdminError;
    expect([error.status, error.code]).toEqual([503, 'kafka_unavailable']);
    expect(error.message).toContain('the replay made no progress for 1 s');
  });

  it('answers 503 when progress stops part-way', async () => {
    let progress = (): void => undefined;
    const waiting = settled(
      whileProgressing((report) => {
        progress = report;
        return new Promise<never>(() => undefined);
      }, TIMEOUT_MS, 'the replay'),
    );
    await vi.advanceTimersByTimeAsync(900);
    progress();
    await vi.advanceTimersByTimeAsync(900);
    expect(waiting.result()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(100);
    expect((waiting.result()?.error as AdminError).status).toBe(503);
  });

  it('passes the work’s own failure on and leaves no timer behind', async () => {
    await expect(whileProgressing(() => Promise.reject(new Error('broken')), TIMEOUT_MS, 'the replay')).rejects.toThrow('broken');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('interruptedReplayError', () => {
  it('is a conflict, with the count, when another replay stopped this one', () => {
    const error = interruptedReplayError(new ReplayInterrupted(6_000, true, undefined));
    expect([error.status, error.code]).toEqual([409, 'replay_conflict']);
    expect(error.body()).toMatchObject({ code: 'replay_conflict', replayed: 6_000, error: expect.stringContaining('after replaying 6000 dead letters') });
  });

  it('is Kafka being slow, with the count, when the broker may have aborted a transaction', () => {
    const error = interruptedReplayError(new ReplayInterrupted(2_000, false, undefined));
    expect([error.status, error.code]).toEqual([503, 'kafka_unavailable']);
    expect(error.body()).toMatchObject({ replayed: 2_000 });
    expect(error.message).not.toMatch(/^another replay started/);
  });
});

describe('AdminDeadLetters.replay', () => {
  const outcome: ReplayOutcome = { matched: 30_000, replayed: 30_000, skipped: 0, dryRun: false };
  const config = { destination: () => ({ enabled: true }) } as unknown as ConstructorParameters<typeof AdminDeadLetters>[0]['config'];

  /** A store whose replay takes `slices` × 0.9 timeouts, reporting progress after each slice. */
  function slowStore(slices: number, failWith?: Error): DeadLetterStore {
    const replay = async (_filter: unknown, options: ReplayOptions = {}) => {
      for (let slice = 0; slice < slices; slice++) {
        await new Promise((resolve) => setTimeout(resolve, 0.9 * TIMEOUT_MS));
        options.onProgress?.();
      }
      if (failWith) throw failWith;
      return outcome;
    };
    return { replay } as unknown as DeadLetterStore;
  }

  it('answers with the outcome of a replay that outlasts the timeout while it moves on', async () => {
    const deadLetters = new AdminDeadLetters({ store: slowStore(15), config, timeoutMs: TIMEOUT_MS });
    const answer = settled(deadLetters.replay({ destination: 'crm' }));
    await vi.advanceTimersByTimeAsync(15 * TIMEOUT_MS);
    expect(answer.result()).toEqual({ value: { destination: 'crm', ...outcome } });
  });

  it('answers 409 with what went out when another replay stopped it', async () => {
    const deadLetters = new AdminDeadLetters({ store: slowStore(3, new ReplayInterrupted(4_000, true, undefined)), config, timeoutMs: TIMEOUT_MS });
    const answer = settled(deadLetters.replay({ destination: 'crm' }));
    await vi.advanceTimersByTimeAsync(3 * TIMEOUT_MS);
    const error = answer.result()?.error as AdminError;
    expect(error.body()).toMatchObject({ code: 'replay_conflict', replayed: 4_000 });
  });
});

describe('AdminDeadLetters.list', () => {
  const config = { destination: () => undefined } as unknown as ConstructorParameters<typeof AdminDeadLetters>[0]['config'];

  /** A store that answers `listed` and records what each list call asked for. */
  function listingStore(listed: DeadLetterList) {
    const calls: Array<{ filter: unknown; limit: number; before: DeadLetterPosition | undefined }> = [];
    const list = (filter: unknown, limit: number, before?: DeadLetterPosition) => {
      calls.push({ filter, limit, before });
      return Promise.resolve(listed);
    };
    return { store: { list } as unknown as DeadLetterStore, calls };
  }

  it('passes the cursor to the store as a position, and answers the next one as a cursor', async () => {
    const { store, calls } = listingStore({ deadLetters: [], matched: 7, next: { deadAt: 1_714_564_800_000, partition: 2, offset: '1041' } });
    const deadLetters = new AdminDeadLetters({ store, config, timeoutMs: TIMEOUT_MS });
    const answer = await deadLetters.list({ destination: 'crm', limit: '3', before: '1714564800000-2-1044' });
    expect(answer).toEqual({ order: 'newest first', matched: 7, deadLetters: [], next: '1714564800000-2-1041' });
    expect(calls).toEqual([{ filter: { destinationId: 'crm', since: undefined, reason: undefined }, limit: 3, before: { deadAt: 1_714_564_800_000, partition: 2, offset: '1044' } }]);
  });

  it('answers next: null on the last page, and lists from the newest without a cursor', async () => {
    const { store, calls } = listingStore({ deadLetters: [], matched: 0, next: undefined });
    const answer = await new AdminDeadLetters({ store, config, timeoutMs: TIMEOUT_MS }).list({});
    expect(answer.next).toBeNull();
    expect(calls[0]).toMatchObject({ limit: 100, before: undefined });
  });

  it('refuses a malformed cursor with 400 naming before, without reading anything', async () => {
    const { store, calls } = listingStore({ deadLetters: [], matched: 0, next: undefined });
    const deadLetters = new AdminDeadLetters({ store, config, timeoutMs: TIMEOUT_MS });
    for (const before of ['', 'abc', '1714564800000-2', '1714564800000-02-1044', 'MTcxNDU2NDgwMDAwMC0yLTEwNDQ', '1-2147483648-0']) {
      const error = await deadLetters.list({ before }).catch((thrown: unknown) => thrown);
      expect(error, before).toBeInstanceOf(AdminError);
      expect((error as AdminError).body(), before).toMatchObject({
        code: 'invalid_request',
        issues: [{ path: 'before', message: expect.stringContaining('is not a dead-letter cursor') }],
      });
      expect((error as AdminError).status).toBe(400);
    }
    expect(calls).toEqual([]);
  });
});
