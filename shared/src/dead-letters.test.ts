import { describe, expect, it } from 'vitest';
import type { DeadLetter, DeadLetterReplay, Delivery } from '@tributary/schemas';
import {
  DeadLetterPage,
  fencedByAnotherReplay,
  formatDeadLetterCursor,
  isMarkerOf,
  isOlderThan,
  matchesFilter,
  NewestDeadLetters,
  newestFirst,
  parseDeadLetterCursor,
  parseTime,
  planReplay,
  REPLAY_SLICE_LIMITS,
  ReplayInterrupted,
  replayedDelivery,
  replayMarkerKey,
  replayMarkerOf,
  Slicer,
  TimeError,
  type DeadLetterPosition,
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

  it('compares offsets of any size as numbers', () => {
    const offsets = ['9223372036854775807', '0', '999', '1000', '9223372036854775806', '99', '100'];
    expect(offsets.map((offset) => stored(0, offset, 5)).sort(newestFirst).map((item) => item.offset)).toEqual(['9223372036854775807', '9223372036854775806', '1000', '999', '100', '99', '0']);
    expect(newestFirst(stored(0, '42', 5), stored(0, '42', 5))).toBe(0);
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

describe('a dead-letter cursor', () => {
  it('names a position as <deadAt>-<partition>-<offset>, and reads back what it wrote', () => {
    const positions: DeadLetterPosition[] = [
      { deadAt: 1_714_564_800_000, partition: 1, offset: '42' },
      { deadAt: 0, partition: 0, offset: '0' },
      { deadAt: -5, partition: 3, offset: '7' },
      { deadAt: Number.MAX_SAFE_INTEGER, partition: 2 ** 31 - 1, offset: '9223372036854775807' },
    ];
    expect(formatDeadLetterCursor(positions[0]!)).toBe('1714564800000-1-42');
    for (const position of positions) expect(parseDeadLetterCursor(formatDeadLetterCursor(position))).toEqual(position);
  });

  it('refuses anything it would not write: other shapes, signs, leading zeros, values out of range', () => {
    const refused = [
      '',
      'next',
      '1-2',
      '1-2-3-4',
      '1--2-3',
      ' 1-2-3',
      '1-2-3 ',
      '01-2-3',
      '1-02-3',
      '1-2-03',
      '-0-1-2',
      '+1-2-3',
      '1-+2-3',
      '1.5-2-3',
      '1e3-2-3',
      '0x1-2-3',
      '１-2-3',
      '9007199254740992-0-0',
      '1-2147483648-0',
      '1-0-9223372036854775808',
      '1-0-99999999999999999999',
      'MTcxNDU2NDgwMDAwMC0xLTQy',
    ];
    for (const text of refused) expect(parseDeadLetterCursor(text), text).toBeUndefined();
  });
});

/**
 * Every page of a listing of `items` (handed to each page in the order given, as a scan
 * would), following each page's cursor through its text as a client does.
 */
function pageThrough(items: readonly StoredDeadLetter[], limit: number): StoredDeadLetter[][] {
  const pages: StoredDeadLetter[][] = [];
  let before: DeadLetterPosition | undefined;
  for (;;) {
    const gathered = new DeadLetterPage(limit, before);
    for (const item of items) gathered.add(item);
    const { deadLetters, matched, next } = gathered.page();
    expect(matched).toBe(items.length);
    pages.push(deadLetters);
    if (next === undefined) return pages;
    expect(next).toEqual({ deadAt: deadLetters.at(-1)!.letter.deadAt, partition: deadLetters.at(-1)!.partition, offset: deadLetters.at(-1)!.offset });
    before = parseDeadLetterCursor(formatDeadLetterCursor(next));
    if (pages.length > items.length) throw new Error('the pages do not end');
  }
}

const place = (item: StoredDeadLetter) => `${item.partition}/${item.offset}`;

/** A scan's order: partition by partition, each in offset order. */
function scanOrder(items: StoredDeadLetter[]): StoredDeadLetter[] {
  return [...items].sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
}

describe('paging through dead letters', () => {
  it('lists only those strictly older than the cursor', () => {
    const at = stored(1, '5', 100);
    expect(isOlderThan(at, { deadAt: 100, partition: 1, offset: '5' })).toBe(false);
    expect(isOlderThan(at, { deadAt: 100, partition: 1, offset: '6' })).toBe(true);
    expect(isOlderThan(at, { deadAt: 100, partition: 2, offset: '0' })).toBe(true);
    expect(isOlderThan(at, { deadAt: 100, partition: 0, offset: '9' })).toBe(false);
    expect(isOlderThan(at, { deadAt: 101, partition: 0, offset: '0' })).toBe(true);
    expect(isOlderThan(at, { deadAt: 99, partition: 9, offset: '99' })).toBe(false);
  });

  it('walks 2,500 dead letters of one millisecond in pages of 1,000, each once, newest first', () => {
    // Three partitions, offsets past 9 and 99 (so numeric, not text, order matters).
    const items = Array.from({ length: 2_500 }, (_, index) => stored(index % 3, String(Math.floor(index / 3)), 10_000));
    const pages = pageThrough(scanOrder(items), 1_000);
    expect(pages.map((page) => page.length)).toEqual([1_000, 1_000, 500]);
    const seen = pages.flat().map(place);
    expect(new Set(seen).size).toBe(2_500);
    expect(seen).toEqual([...items].sort(newestFirst).map(place));
  });

  it('stops exactly at the end: no cursor when the last page is full, or when one page holds all', () => {
    const items = Array.from({ length: 20 }, (_, index) => stored(0, String(index), 10_000));
    expect(pageThrough(items, 10).map((page) => page.length)).toEqual([10, 10]);
    expect(pageThrough(items, 20).map((page) => page.length)).toEqual([20]);
    expect(pageThrough(items, 19).map((page) => page.length)).toEqual([19, 1]);
    expect(pageThrough([], 10)).toEqual([[]]);
  });

  it('sees every dead letter once across pages of any size, with many ties, in whatever order they come', () => {
    let seed = 11;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const offsets = [0, 0, 0];
    // Few distinct deadAt values, so most of them are shared; a partition's offsets do not follow deadAt.
    const items = Array.from({ length: 300 }, () => {
      const partition = Math.floor(random() * 3);
      return stored(partition, String(offsets[partition]!++), 1_000 + Math.floor(random() * 6));
    });
    const expected = [...items].sort(newestFirst).map(place);
    for (const limit of [1, 3, 7, 100, 299, 300, 301]) {
      const pages = pageThrough(scanOrder(items), limit);
      expect(pages.flat().map(place), `limit ${limit}`).toEqual(expected);
      expect(pages.length, `limit ${limit}`).toBe(Math.max(1, Math.ceil(items.length / limit)));
    }
    const shuffled = [...items].sort(() => random() - 0.5);
    expect(pageThrough(shuffled, 7).flat().map(place)).toEqual(expected);
  });

  it('counts every match on every page, the cursor notwithstanding', () => {
    const gathered = new DeadLetterPage(2, { deadAt: 5, partition: 0, offset: '0' });
    for (const deadAt of [9, 7, 5, 4, 3, 1]) gathered.add(stored(0, '0', deadAt));
    const page = gathered.page();
    expect([page.matched, page.deadLetters.map((item) => item.letter.deadAt), page.next?.deadAt]).toEqual([6, [4, 3], 3]);
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
