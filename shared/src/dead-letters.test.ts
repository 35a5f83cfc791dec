import { describe, expect, it } from 'vitest';
import type { DeadLetter, DeadLetterReplay, Delivery } from '@tributary/schemas';
import {
  fencedByAnotherReplay,
  isMarkerOf,
  matchesFilter,
  NewestDeadLetters,
  newestFirst,
  parseTime,
  planReplay,
  REPLAY_SLICE_LIMITS,
  ReplayInterrupted,
  replayedDelivery,
  replayMarkerKey,
  replayMarkerOf,
  Slicer,
  TimeError,
  type StoredDeadLetter,
} from './dead-letters.js';

const delivery = (overrides: Partial<Delivery> = {}): Delivery => ({
  deliveryId: 'crm/m-1',
  destinationId: 'crm',
  sourceId: 'web',
  messageId: 'm-1',
  messageType: 'track',
  userId: null,
  anonymousId: null,
  body: Buffer.from('{"type":"track"}'),
  receivedAt: 1_000,
  routedAt: 1_001,
  attempts: 4,
  firstAttemptAt: 2_000,
  lastError: 'HTTP 503',
  lastStatus: 503,
  replays: 0,
  ...overrides,
});

const letter = (overrides: Partial<DeadLetter> = {}, deliveryOverrides: Partial<Delivery> = {}): DeadLetter => ({
  delivery: delivery(deliveryOverrides),
  reason: 'expired',
  status: 503,
  error: 'gave up',
  deadAt: 10_000,
  ...overrides,
});

const stored = (partition: number, offset: string, deadAt: number, overrides: Partial<DeadLetter> = {}): StoredDeadLetter => ({
  partition,
  offset,
  letter: letter({ deadAt, ...overrides }),
});

describe('matchesFilter', () => {
  it('matches everything without a filter', () => {
    expect(matchesFilter(letter(), {})).toBe(true);
  });

  it('checks destination, reason and since together', () => {
    const dead = letter({ reason: 'http_status', deadAt: 5_000 });
    expect(matchesFilter(dead, { destinationId: 'crm', reason: 'http_status', since: 5_000 })).toBe(true);
    expect(matchesFilter(dead, { destinationId: 'other' })).toBe(false);
    expect(matchesFilter(dead, { reason: 'expired' })).toBe(false);
    expect(matchesFilter(dead, { since: 5_001 })).toBe(false);
  });
});

describe('replayedDelivery', () => {
  it('gives a fresh window and counts the replay, keeping the message and its body', () => {
    const original = delivery({ replays: 2 });
    expect(replayedDelivery(original)).toEqual({ ...original, attempts: 0, firstAttemptAt: null, lastError: null, lastStatus: null, replays: 3 });
  });
});

const storedOf = (partition: number, offset: string, messageId: string, destinationId = 'crm'): StoredDeadLetter => ({
  partition,
  offset,
  letter: letter({}, { deliveryId: `${destinationId}/web/${messageId}`, destinationId, messageId }),
});

const markerFor = ({ letter: { delivery } }: StoredDeadLetter, replayedAt = 50): DeadLetterReplay => ({
  deliveryId: delivery.deliveryId,
  destinationId: delivery.destinationId,
  replayedAt,
});

const markersOf = (entries: Array<[StoredDeadLetter, DeadLetterReplay]>) => new Map(entries.map(([at, marker]) => [replayMarkerKey(at.partition, at.offset), marker]));

describe('replay markers', () => {
  const dead = storedOf(2, '41', 'm-1');

  it('count for the dead letter whose delivery and destination they name', () => {
    expect(isMarkerOf(markerFor(dead), dead.letter)).toBe(true);
    expect(replayMarkerOf(dead, markersOf([[dead, markerFor(dead, 77)]]))?.replayedAt).toBe(77);
  });

  it('do not count for another dead letter at the same place (a recreated dead-letter topic)', () => {
    const earlier = storedOf(2, '41', 'm-old');
    expect(isMarkerOf(markerFor(earlier), dead.letter)).toBe(false);
    expect(replayMarkerOf(dead, markersOf([[dead, markerFor(earlier)]]))).toBeUndefined();
    // Same message id, other destination: another delivery.
    const elsewhere = storedOf(2, '41', 'm-1', 'other');
    expect(replayMarkerOf(dead, markersOf([[dead, { ...markerFor(dead), destinationId: 'other' }]]))).toBeUndefined();
    expect(isMarkerOf(markerFor(elsewhere), dead.letter)).toBe(false);
  });

  it('count only at their own place', () => {
    expect(replayMarkerOf(dead, markersOf([[storedOf(2, '42', 'm-1'), markerFor(dead)]]))).toBeUndefined();
    expect(isMarkerOf(undefined, dead.letter)).toBe(false);
  });
});

describe('planReplay', () => {
  it('replays a dead letter without a marker: a fresh delivery and a marker naming it', () => {
    const dead = storedOf(0, '4', 'm-4');
    const plan = planReplay(dead, new Map(), 99);
    expect(plan).toEqual({
      delivery: replayedDelivery(dead.letter.delivery),
      markerKey: '0/4',
      marker: { deliveryId: 'crm/web/m-4', destinationId: 'crm', replayedAt: 99 },
    });
    expect(plan!.delivery.attempts).toBe(0);
  });

  it('skips one replayed before, and replays a new dead letter where a purged topic had a replayed one', () => {
    const replayedBefore = storedOf(1, '0', 'm-1');
    const markers = markersOf([[replayedBefore, markerFor(replayedBefore)]]);
    expect(planReplay(replayedBefore, markers, 99)).toBeUndefined();
    const newAtSamePlace = storedOf(1, '0', 'm-9');
    expect(planReplay(newAtSamePlace, markers, 99)?.marker.deliveryId).toBe('crm/web/m-9');
  });

  it('replays nothing twice: planning again after the markers are written skips all', () => {
    const matched = [storedOf(0, '1', 'a'), storedOf(0, '2', 'b')];
    const markers = new Map<string, DeadLetterReplay>();
    const first = matched.map((stored) => planReplay(stored, markers, 1));
    for (const plan of first) if (plan) markers.set(plan.markerKey, plan.marker);
    const second = matched.map((stored) => planReplay(stored, markers, 2));
    expect([first.filter(Boolean).length, second.filter(Boolean).length]).toEqual([2, 0]);
  });
});

/** Every slice a Slicer cuts from `sizes` (item i has size sizes[i]), as lists of item indexes. */
function sliceAll(sizes: number[], limits: { records: number; bytes: number }): number[][] {
  const slicer = new Slicer<number>(limits);
  const slices: number[][] = [];
  for (const [index, bytes] of sizes.entries()) {
    const slice = slicer.add(index, bytes);
    if (slice) slices.push(slice);
  }
  const last = slicer.finish();
  if (last) slices.push(last);
  return slices;
}

describe('Slicer', () => {
  it('hands out a slice as soon as it holds the most records', () => {
    const slicer = new Slicer<string>({ records: 2, bytes: 1_000 });
    expect(slicer.add('a', 1)).toBeUndefined();
    expect(slicer.add('b', 1)).toEqual(['a', 'b']);
    expect(slicer.add('c', 1)).toBeUndefined();
    expect(slicer.finish()).toEqual(['c']);
    expect(slicer.finish()).toBeUndefined();
  });

  it('closes a slice before the item that would take it past the bytes', () => {
    expect(sliceAll([40, 40, 30, 10, 100], { records: 10, bytes: 100 })).toEqual([[0, 1], [2, 3], [4]]);
  });

  it('lets an item larger than the bytes travel alone', () => {
    expect(sliceAll([10, 500, 10], { records: 10, bytes: 100 })).toEqual([[0], [1], [2]]);
    expect(sliceAll([500, 500], { records: 10, bytes: 100 })).toEqual([[0], [1]]);
  });

  it('cuts one record per slice at a limit of one', () => {
    expect(sliceAll([1, 500, 1], { records: 1, bytes: 100 })).toEqual([[0], [1], [2]]);
  });

  it('has nothing to hand out for nothing', () => {
    expect(sliceAll([], REPLAY_SLICE_LIMITS)).toEqual([]);
  });

  it('keeps every item once, in order, and each slice within both limits', () => {
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const limits = { records: 7, bytes: 1_000 };
    const sizes = Array.from({ length: 2_000 }, () => Math.floor(random() * 400) + 1);
    const slices = sliceAll(sizes, limits);
    expect(slices.flat()).toEqual(sizes.map((_size, index) => index));
    for (const slice of slices) {
      expect(slice.length).toBeLessThanOrEqual(limits.records);
      expect(slice.reduce((sum, index) => sum + sizes[index]!, 0)).toBeLessThanOrEqual(limits.bytes);
    }
    // Greedy: a slice is only cut short when the next item would not have fitted.
    for (const [index, slice] of slices.slice(0, -1).entries()) {
      const next = slices[index + 1]![0]!;
      if (slice.length < limits.records) expect(slice.reduce((sum, item) => sum + sizes[item]!, 0) + sizes[next]!).toBeGreaterThan(limits.bytes);
    }
  });

  it('refuses limits that could hold nothing', () => {
    expect(() => new Slicer({ records: 0, bytes: 100 })).toThrow(RangeError);
    expect(() => new Slicer({ records: 10, bytes: 0 })).toThrow(RangeError);
  });
});

describe('an interrupted replay', () => {
  it('was fenced by another replay if its transaction was younger than the transaction timeout', () => {
    expect(fencedByAnotherReplay(200, 15_000)).toBe(true);
    expect(fencedByAnotherReplay(14_999, 15_000)).toBe(true);
    expect(fencedByAnotherReplay(15_000, 15_000)).toBe(false);
    expect(fencedByAnotherReplay(40_000)).toBe(false);
  });

  it('says how many went out and that a re-run skips them, blaming another replay only when sure', () => {
    const byAnother = new ReplayInterrupted(4_000, true, new Error('fenced'));
    expect(byAnother.message).toBe('another replay started and stopped this one after replaying 4000 dead letters; running it again skips every dead letter already replayed');
    expect(byAnother.replayed).toBe(4_000);
    const slow = new ReplayInterrupted(1, false, new Error('fenced'));
    expect(slow.message).toContain('this replay stopped after replaying 1 dead letter: one of its transactions stayed open longer than the broker');
    expect(slow.message).toContain('or another replay started at that moment');
  });
});

describe('newest first', () => {
  it('orders by deadAt, then partition, then offset as a number', () => {
    const items = [stored(0, '9', 5), stored(1, '2', 5), stored(0, '10', 5), stored(0, '1', 7)];
    expect(items.sort(newestFirst).map((item) => `${item.partition}/${item.offset}`)).toEqual(['0/1', '1/2', '0/10', '0/9']);
  });

  it('keeps only the newest `limit` while counting every match', () => {
    const newest = new NewestDeadLetters(3);
    for (const deadAt of [4, 9, 1, 7, 3, 8]) newest.add(stored(0, String(deadAt), deadAt));
    expect(newest.newest().map((item) => item.letter.deadAt)).toEqual([9, 8, 7]);
    expect(newest.matched).toBe(6);
  });

  it('counts with a limit of zero', () => {
    const newest = new NewestDeadLetters(0);
    newest.add(stored(0, '1', 1));
    expect([newest.newest(), newest.matched]).toEqual([[], 1]);
  });
});

describe('parseTime', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');

  it('reads a duration as that long ago', () => {
    expect(parseTime('2h', now)).toBe(now - 7_200_000);
    expect(parseTime('1h30m', now)).toBe(now - 5_400_000);
    expect(parseTime(' 500ms ', now)).toBe(now - 500);
  });

  it('reads ISO-8601 with a zone, and a date as midnight UTC', () => {
    expect(parseTime('2024-04-30T10:00:00Z', now)).toBe(Date.parse('2024-04-30T10:00:00Z'));
    expect(parseTime('2024-04-30T10:00:00.250+02:00', now)).toBe(Date.parse('2024-04-30T08:00:00.250Z'));
    expect(parseTime('2024-04-30', now)).toBe(Date.parse('2024-04-30T00:00:00Z'));
  });

  it('refuses a date-time without a zone, bare numbers and nonsense, saying what it takes', () => {
    for (const text of ['2024-04-30T10:00:00', '5', 'yesterday', '2h ago', '2024-13-45T99:00Z', '']) {
      expect(() => parseTime(text, now), text).toThrow(TimeError);
    }
    expect(() => parseTime('soon', now)).toThrow('"soon" is not a time: use ISO-8601 with a time zone');
  });
});
