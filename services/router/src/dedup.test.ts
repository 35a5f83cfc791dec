import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dedupCapacity, DedupState, dedupKey, ENTRY_BYTES, type DedupOptions } from './dedup.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-21T10:00:00.000Z');

describe('DedupState', () => {
  it('keys by source and message id, so the same id from two sources is two messages', () => {
    const state = new DedupState({ windowMs: 24 * HOUR, maxEntries: 10, maxBytes: 1e9 });
    state.remember(dedupKey('web', 'm-1'), T0, T0);
    expect(state.isDuplicate(dedupKey('web', 'm-1'), T0 + 1)).toBe(true);
    expect(state.isDuplicate(dedupKey('app', 'm-1'), T0 + 1)).toBe(false);
  });

  it('treats a repeat as a duplicate until the window has passed, not after', () => {
    const state = new DedupState({ windowMs: 24 * HOUR, maxEntries: 10, maxBytes: 1e9 });
    state.remember('web/m-1', T0, T0);
    expect(state.isDuplicate('web/m-1', T0 + 24 * HOUR - 1)).toBe(true);
    expect(state.isDuplicate('web/m-1', T0 + 24 * HOUR)).toBe(false);
  });

  it('does not hold an entry that is already outside the window (an old record read at start-up)', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 10, maxBytes: 1e9 });
    state.remember('web/old', T0 - HOUR, T0);
    expect(state.size).toBe(0);
  });

  it('keeps the newer first-seen time when the same key is applied again out of order', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 10, maxBytes: 1e9 });
    state.remember('web/m-1', T0 + 10, T0 + 10);
    state.remember('web/m-1', T0, T0 + 10);
    expect(state.isDuplicate('web/m-1', T0 + HOUR + 5)).toBe(true);
    expect(state.size).toBe(1);
  });

  it('evicts expired entries from the oldest on', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 10, maxBytes: 1e9 });
    state.remember('web/a', T0, T0);
    state.remember('web/b', T0 + 1000, T0 + 1000);
    state.remember('web/c', T0 + 2000, T0 + 2000);
    expect(state.evictExpired(T0 + HOUR + 1000)).toBe(2);
    expect(state.size).toBe(1);
    expect(state.isDuplicate('web/c', T0 + HOUR + 1000)).toBe(true);
  });

  it('forgets the oldest entries first when full, and counts it', () => {
    let evicted = 0;
    const state = new DedupState({ windowMs: HOUR, maxEntries: 2, maxBytes: 1e9, onCapacityEviction: () => evicted++ });
    state.remember('web/a', T0, T0);
    state.remember('web/b', T0 + 1, T0 + 1);
    state.remember('web/c', T0 + 2, T0 + 2);
    expect(state.size).toBe(2);
    expect(evicted).toBe(1);
    expect(state.isDuplicate('web/a', T0 + 3)).toBe(false);
    expect(state.isDuplicate('web/b', T0 + 3)).toBe(true);
    expect(state.isDuplicate('web/c', T0 + 3)).toBe(true);
  });

  it('a key forwarded again after its window moves to the young end', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 2, maxBytes: 1e9 });
    state.remember('web/a', T0, T0);
    state.remember('web/b', T0 + 10, T0 + 10);
    state.remember('web/a', T0 + HOUR, T0 + HOUR);
    state.remember('web/c', T0 + HOUR + 1, T0 + HOUR + 1);
    expect(state.isDuplicate('web/a', T0 + HOUR + 2)).toBe(true);
    expect(state.isDuplicate('web/b', T0 + HOUR + 2)).toBe(false);
  });
});

describe('DedupClaims (one chunk, one transaction)', () => {
  it('catches a repeat inside the same chunk', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 10, maxBytes: 1e9 });
    const claims = state.claims(T0);
    expect(claims.claim('web/m-1')).toBe(true);
    expect(claims.claim('web/m-1')).toBe(false);
    expect(claims.claim('web/m-2')).toBe(true);
    expect(claims.records()).toEqual([{ firstSeenAt: T0, keys: ['web/m-1', 'web/m-2'] }]);
  });

  it('writes one record for the whole transaction, split only where its ids would pass the byte bound', () => {
    const claims = new DedupState({ windowMs: HOUR, maxEntries: 100, maxBytes: 1e9 }).claims(T0);
    expect(claims.records()).toEqual([]);
    for (let n = 0; n < 10; n++) claims.claim(`web/m-${n}`);
    expect(claims.records()).toHaveLength(1);
    // 'web/m-n' is 7 units: at most 3 × 7 + 5 = 26 bytes; four fit in 104.
    const split = claims.records(104);
    expect(split.map((record) => record.keys.length)).toEqual([4, 4, 2]);
    expect(split.flatMap((record) => record.keys)).toEqual(Array.from({ length: 10 }, (_, n) => `web/m-${n}`));
    expect(split.every((record) => record.firstSeenAt === T0)).toBe(true);
    // A single id larger than the bound still gets its record.
    expect(claims.records(10)).toHaveLength(10);
  });

  it('refuses an id the state already holds within the window', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 10, maxBytes: 1e9 });
    state.remember('web/m-1', T0, T0);
    expect(state.claims(T0 + HOUR - 1).claim('web/m-1')).toBe(false);
    expect(state.claims(T0 + HOUR).claim('web/m-1')).toBe(true);
  });

  it('reaches the state only on commit, so an aborted chunk forgets its claims', () => {
    const state = new DedupState({ windowMs: HOUR, maxEntries: 10, maxBytes: 1e9 });
    const aborted = state.claims(T0);
    aborted.claim('web/m-1');
    expect(state.size).toBe(0);
    const retried = state.claims(T0 + 5);
    expect(retried.claim('web/m-1')).toBe(true);
    retried.commit();
    expect(state.isDuplicate('web/m-1', T0 + 6)).toBe(true);
  });
});

describe('DedupState memory bound', () => {
  it('forgets the oldest entries once their bytes pass DEDUP_MAX_BYTES, whatever the count', () => {
    let evicted = 0;
    const state = new DedupState({ windowMs: 3_600_000, maxEntries: 1_000_000, maxBytes: 3 * ENTRY_BYTES + 5, onCapacityEviction: () => evicted++ });
    for (let n = 0; n < 5; n++) state.remember(`web/m-${n}`, 1_000 + n, 2_000);
    expect(state.size).toBe(3);
    expect(evicted).toBe(2);
    expect(state.isDuplicate('web/m-0', 2_000)).toBe(false);
    expect(state.isDuplicate('web/m-4', 2_000)).toBe(true);
    expect(state.bytes).toBe(3 * ENTRY_BYTES);
  });

  it('holds a long id at the same cost as a short one', () => {
    const state = new DedupState({ windowMs: 3_600_000, maxEntries: 10, maxBytes: 1e9 });
    state.remember(`web/${'x'.repeat(10_000)}`, 1_000, 2_000);
    state.remember('web/m-1', 1_000, 2_000);
    expect(state.bytes).toBe(2 * ENTRY_BYTES);
    expect(state.isDuplicate(`web/${'x'.repeat(10_000)}`, 2_000)).toBe(true);
    expect(state.isDuplicate(`web/${'x'.repeat(9_999)}y`, 2_000)).toBe(false);
  });

  it('takes the smaller of the two bounds as its capacity, and at least one entry', () => {
    expect(dedupCapacity({ maxEntries: 2_000_000, maxBytes: 200_000_000 })).toBe(2_000_000);
    expect(dedupCapacity({ maxEntries: 2_000_000, maxBytes: 10 * ENTRY_BYTES })).toBe(10);
    expect(dedupCapacity({ maxEntries: 5, maxBytes: 1 })).toBe(1);
  });
});

/**
 * The state as it was first written, on a Map of the keys in insertion order: plainly right,
 * slow at capacity (every eviction walks the holes earlier deletions left at the front) and
 * heavy on the heap.
 */
class ReferenceState {
  readonly firstSeen = new Map<string, number>();
  bytes = 0;
  evictions = 0;
  constructor(private readonly options: DedupOptions) {}
  isDuplicate(key: string, now: number): boolean {
    const at = this.firstSeen.get(key);
    return at !== undefined && now - at < this.options.windowMs;
  }
  remember(key: string, at: number, now: number): void {
    if (now - at >= this.options.windowMs) return;
    const existing = this.firstSeen.get(key);
    if (existing !== undefined) {
      if (existing >= at) return;
      this.forget(key);
    }
    this.firstSeen.set(key, at);
    this.bytes += ENTRY_BYTES;
    while (this.firstSeen.size > dedupCapacity(this.options)) {
      this.forget(this.firstSeen.keys().next().value as string);
      this.evictions++;
    }
  }
  evictExpired(now: number): number {
    let evicted = 0;
    for (const [key, at] of this.firstSeen) {
      if (now - at < this.options.windowMs) break;
      this.forget(key);
      evicted++;
    }
    return evicted;
  }
  private forget(key: string): void {
    if (this.firstSeen.delete(key)) this.bytes -= ENTRY_BYTES;
  }
}

describe('DedupState against the Map-keyed reference', () => {
  it('remembers, expires and evicts exactly as the reference does, for any mix of keys, times and bounds', () => {
    const step = fc.oneof(
      // A key forwarded now, or applied from the topic with an earlier time.
      fc.record({ kind: fc.constant('remember' as const), key: fc.integer({ min: 0, max: 30 }), back: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000 })), advance: fc.integer({ min: 0, max: 400 }) }),
      fc.record({ kind: fc.constant('expire' as const), advance: fc.integer({ min: 0, max: 2_000 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: ENTRY_BYTES, max: 20 * ENTRY_BYTES }), fc.array(step, { minLength: 20, maxLength: 200 }), (maxEntries, maxBytes, steps) => {
        const options = { windowMs: 3_000, maxEntries, maxBytes };
        let evictions = 0;
        const state = new DedupState({ ...options, onCapacityEviction: () => evictions++ });
        const reference = new ReferenceState(options);
        let now = T0;
        for (const s of steps) {
          now += s.advance;
          if (s.kind === 'remember') {
            const key = `web/m-${s.key}`;
            state.remember(key, now - s.back, now);
            reference.remember(key, now - s.back, now);
          } else {
            expect(state.evictExpired(now)).toBe(reference.evictExpired(now));
          }
          expect([state.size, state.bytes, evictions]).toEqual([reference.firstSeen.size, reference.bytes, reference.evictions]);
          for (let key = 0; key <= 30; key++) expect(state.isDuplicate(`web/m-${key}`, now)).toBe(reference.isDuplicate(`web/m-${key}`, now));
        }
      }),
      { numRuns: 150 },
    );
  }, 30_000);
});
