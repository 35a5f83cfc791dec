import { describe, expect, it } from 'vitest';
import type { DeadLetter, Delivery } from '@tributary/schemas';
import {
  matchesFilter,
  NewestDeadLetters,
  newestFirst,
  parseTime,
  planReplay,
  replayedDelivery,
  replayMarkerKey,
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

describe('planReplay', () => {
  it('replays what has no marker and skips what has one, in the given order', () => {
    const matched = [stored(0, '4', 1), stored(1, '0', 2), stored(1, '7', 3)];
    const replayed = new Set([replayMarkerKey(1, '0')]);
    const plan = planReplay(matched, (key) => replayed.has(key), 99);
    expect(plan.skipped).toBe(1);
    expect(plan.replay.map((entry) => entry.markerKey)).toEqual(['0/4', '1/7']);
    expect(plan.replay[0]!.marker).toEqual({ deliveryId: 'crm/m-1', destinationId: 'crm', replayedAt: 99 });
    expect(plan.replay[0]!.delivery.attempts).toBe(0);
  });

  it('replays nothing twice: planning again after the markers are written skips all', () => {
    const matched = [stored(0, '1', 1), stored(0, '2', 2)];
    const markers = new Set<string>();
    const first = planReplay(matched, (key) => markers.has(key), 1);
    for (const entry of first.replay) markers.add(entry.markerKey);
    const second = planReplay(matched, (key) => markers.has(key), 2);
    expect([first.replay.length, second.replay.length, second.skipped]).toEqual([2, 0, 2]);
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
