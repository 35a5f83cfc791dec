import { describe, expect, it } from 'vitest';
import { AdminError } from '@tributary/shared';
import { encodeAttemptCursor, encodeTailCursor } from './cursor.js';
import { MAX_RANGE_MS, parseAttemptSearch, parseId, parseMessageLookup, parseRange, parseStatus, parseTail, parseTime, parseTimeline } from './params.js';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');

function refusal(run: () => unknown): AdminError {
  try {
    run();
  } catch (error) {
    if (error instanceof AdminError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseTime', () => {
  it('takes ISO-8601 and epoch milliseconds', () => {
    expect(parseTime('2026-11-25T10:00:00Z')).toBe(Date.parse('2026-11-25T10:00:00Z'));
    expect(parseTime('2026-11-25T10:00:00.123+01:00')).toBe(Date.parse('2026-11-25T09:00:00.123Z'));
    expect(parseTime('2026-11-25')).toBe(Date.parse('2026-11-25T00:00:00Z'));
    expect(parseTime('1764064800000')).toBe(1_764_064_800_000);
  });

  it('refuses anything else', () => {
    for (const bad of ['yesterday', 'Tue, 25 Nov 2026', '2026-13-45T00:00:00Z', '-5', '1.5', '']) expect(parseTime(bad), bad).toBeUndefined();
    // Past what a date holds: answered with it, the read API failed.
    expect(parseTime('8640000000000000')).toBe(8.64e15);
    expect(parseTime('9999999999999999')).toBeUndefined();
  });

  it('refuses a date-time without a zone: it was read in the server\'s zone, a date in UTC', () => {
    expect(parseTime('2026-11-25T10:00:00')).toBeUndefined();
    expect(parseTime('2026-11-25T10:00')).toBeUndefined();
    expect(parseTime('2026-11-25 10:00:00Z')).toBe(Date.parse('2026-11-25T10:00:00Z'));
    expect(parseTime('2026-11-25T10:00-0130')).toBe(Date.parse('2026-11-25T11:30:00Z'));
    expect(parseTime('2026-11-25T10:00:00.123456789+05')).toBe(Date.parse('2026-11-25T05:00:00.123Z'));
    expect(parseTime('0099-01-01')).toBe(Date.parse('0099-01-01T00:00:00Z'));
  });

  it('refuses fields that do not name a time rather than rolling them into another day', () => {
    for (const bad of ['2026-02-31', '2026-02-29', '2026-04-31T00:00:00Z', '2026-11-25T24:00:00Z', '2026-11-25T10:60:00Z', '2026-11-25T10:00:60Z', '2026-00-10', '2026-11-00', '2026-11-25T10:00+24:00']) {
      expect(parseTime(bad), bad).toBeUndefined();
    }
    expect(parseTime('2028-02-29')).toBe(Date.parse('2028-02-29T00:00:00Z'));
    expect(parseTime('2000-02-29')).toBe(Date.parse('2000-02-29T00:00:00Z'));
    expect(parseTime('2100-02-29')).toBeUndefined();
  });

  it('says what it takes in the 400', () => {
    expect(refusal(() => parseRange({ since: '2026-11-25T10:00:00' }, NOW)).issues).toEqual([{ path: 'since', message: expect.stringMatching(/with a zone .*read as its UTC midnight/) }]);
  });
});

describe('parseStatus', () => {
  it('reads outcomes, statuses, classes and error', () => {
    expect(parseStatus('dead')).toEqual({ kind: 'outcome', outcome: 'dead' });
    expect(parseStatus('503')).toEqual({ kind: 'status', status: 503 });
    expect(parseStatus('5xx')).toEqual({ kind: 'class', from: 500, to: 600 });
    expect(parseStatus('2XX')).toEqual({ kind: 'class', from: 200, to: 300 });
    expect(parseStatus('error')).toEqual({ kind: 'error' });
    expect(parseStatus('failed')).toBeUndefined();
    expect(parseStatus('700')).toBeUndefined();
  });
});

describe('parseAttemptSearch', () => {
  it('defaults to the last hour, 50 at a time', () => {
    expect(parseAttemptSearch({}, NOW)).toEqual({ since: NOW - 3_600_000, until: NOW, limit: 50 });
  });

  it('reads every filter and the cursor', () => {
    const cursor = encodeAttemptCursor({ startedAt: NOW - 5, partition: 1, offset: 9 });
    const search = parseAttemptSearch(
      { destination: 'crm', source: 'web', status: '4xx', userId: 'u-1', messageId: 'm-1', since: '2026-11-25T11:30:00Z', until: String(NOW), limit: '500', cursor },
      NOW,
    );
    expect(search).toEqual({
      destination: 'crm',
      source: 'web',
      status: { kind: 'class', from: 400, to: 500 },
      userId: 'u-1',
      messageId: 'm-1',
      since: NOW - 1_800_000,
      until: NOW,
      limit: 500,
      cursor: { startedAt: NOW - 5, partition: 1, offset: 9 },
    });
  });

  it('refuses with a 400 naming each bad parameter', () => {
    const error = refusal(() => parseAttemptSearch({ limit: '501', status: 'bad', since: 'soon', cursor: 'zz!' }, NOW));
    expect(error.status).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.issues.map((issue) => issue.path).sort()).toEqual(['cursor', 'limit', 'since', 'status']);
    expect(error.message).toMatch(/limit: must be from 1 to 500/);
  });

  it('refuses unknown and repeated parameters, and a range that ends before it starts', () => {
    expect(refusal(() => parseAttemptSearch({ destinationId: 'crm' }, NOW)).issues).toEqual([{ path: 'destinationId', message: expect.stringMatching(/unknown query parameter/) }]);
    expect(refusal(() => parseAttemptSearch({ source: ['a', 'b'] }, NOW)).issues[0]?.path).toBe('source');
    expect(refusal(() => parseAttemptSearch({ since: String(NOW), until: String(NOW - 1) }, NOW)).issues[0]?.path).toBe('since');
    expect(refusal(() => parseAttemptSearch({ limit: '0' }, NOW)).issues[0]?.path).toBe('limit');
  });

  it("refuses the names Object.prototype holds as unknown too", () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      // JSON.parse makes `__proto__` an own key, as a query-string parser does.
      const query = JSON.parse(`{"${name}":"1"}`) as Record<string, string>;
      expect(refusal(() => parseAttemptSearch(query, NOW)).issues, name).toEqual([{ path: name, message: expect.stringMatching(/unknown query parameter/) }]);
      expect(refusal(() => parseRange(query, NOW)).issues[0]?.path, name).toBe(name);
      expect(refusal(() => parseTail(query)).issues[0]?.path, name).toBe(name);
    }
  });
});

describe('ranges and the retention horizon', () => {
  const DAY = 86_400_000;

  it('reads from no earlier than now minus the retention, and says so in the range', () => {
    expect(parseRange({ since: '0' }, NOW, 3 * DAY)).toEqual({ since: NOW - 3 * DAY, until: NOW });
    expect(parseAttemptSearch({ source: 'nope', since: '0' }, NOW, 3 * DAY)).toMatchObject({ since: NOW - 3 * DAY, until: NOW });
    expect(parseTimeline({ since: '0', bucket: '1h' }, NOW, DAY)).toMatchObject({ since: NOW - DAY, until: NOW, buckets: 24 });
    // A range wholly before the horizon is left as asked: raised, it would end before it starts.
    expect(parseRange({ since: '0', until: '1000' }, NOW, DAY)).toEqual({ since: 0, until: 1000 });
  });

  it('refuses more than 7 days after that, with a 400 that says why', () => {
    expect(parseRange({ since: String(NOW - MAX_RANGE_MS) }, NOW, 30 * DAY)).toEqual({ since: NOW - MAX_RANGE_MS, until: NOW });
    const error = refusal(() => parseRange({ since: String(NOW - 10 * DAY) }, NOW, 30 * DAY));
    expect(error.status).toBe(400);
    expect(error.issues).toEqual([{ path: 'since', message: expect.stringMatching(/is 10 days; at most 7 days are answered/) }]);
    expect(refusal(() => parseAttemptSearch({ since: String(NOW - DAY), until: String(NOW + 7 * DAY) }, NOW)).issues[0]?.path).toBe('since');
    expect(refusal(() => parseTimeline({ since: String(NOW - 8 * DAY), bucket: '1d' }, NOW, 30 * DAY)).issues[0]?.path).toBe('since');
  });

  it("keeps the console's ranges as they were: the last hour by default, its charts' 7 days", () => {
    expect(parseRange({}, NOW)).toEqual({ since: NOW - 3_600_000, until: NOW });
    expect(parseTimeline({ since: new Date(NOW - 7 * DAY).toISOString(), until: new Date(NOW).toISOString(), bucket: '2h' }, NOW)).toMatchObject({ since: NOW - 7 * DAY, until: NOW, buckets: 84 });
  });
});

describe('parseTail and parseRange', () => {
  it('read the tail cursor and limit (1–200)', () => {
    expect(parseTail({})).toEqual({ limit: 50 });
    expect(parseTail({ source: 'web', after: encodeTailCursor(42), limit: '200' })).toEqual({ source: 'web', after: 42, limit: 200 });
    expect(refusal(() => parseTail({ limit: '201' })).issues[0]?.path).toBe('limit');
    expect(refusal(() => parseTail({ after: 'nope' })).issues[0]?.path).toBe('after');
  });

  it('defaults a range to the hour before until', () => {
    expect(parseRange({ until: String(NOW) }, 0)).toEqual({ since: NOW - 3_600_000, until: NOW });
  });
});

describe('parseTimeline', () => {
  it('aligns buckets to whole bucket lengths', () => {
    const timeline = parseTimeline({ since: String(NOW - 90_000 + 1), until: String(NOW), bucket: '1m' }, NOW);
    expect(timeline).toEqual({ since: NOW - 89_999, until: NOW, bucketMs: 60_000, origin: NOW - 120_000, buckets: 2 });
    expect(parseTimeline({}, NOW)).toMatchObject({ bucketMs: 60_000, buckets: 60 });
  });

  it('answers at most 1,000 buckets, of 10 s to 1 d', () => {
    expect(refusal(() => parseTimeline({ since: String(NOW - 86_400_000), bucket: '10s' }, NOW)).issues[0]).toMatchObject({ path: 'bucket', message: expect.stringMatching(/8640 buckets/) });
    expect(refusal(() => parseTimeline({ bucket: '5s' }, NOW)).issues[0]?.path).toBe('bucket');
    expect(refusal(() => parseTimeline({ bucket: '2d' }, NOW)).issues[0]?.path).toBe('bucket');
    expect(refusal(() => parseTimeline({ bucket: 'often' }, NOW)).issues[0]?.path).toBe('bucket');
  });
});

describe('parseId', () => {
  it('refuses an empty id by name', () => {
    expect(parseId('messageId', 'm-1')).toBe('m-1');
    // Looked up as written: a NUL, which PostgreSQL text refuses, is stored as U+FFFD.
    expect(parseId('messageId', 'a\u0000b')).toBe('a\uFFFDb');
    expect(refusal(() => parseId('messageId', '')).issues[0]?.path).toBe('messageId');
  });
});

describe('parseMessageLookup', () => {
  it('reads the id from the query with /messages/by-id, where the dot segments . and .. can travel', () => {
    expect(parseMessageLookup('by-id', { messageId: '..' })).toBe('..');
    expect(parseMessageLookup('by-id', { messageId: '.' })).toBe('.');
    expect(parseMessageLookup('m-1', {})).toBe('m-1');
    // Without a query, by-id is an id like any other.
    expect(parseMessageLookup('by-id', {})).toBe('by-id');
  });

  it('refuses two ids, an empty one, and any other parameter', () => {
    expect(refusal(() => parseMessageLookup('m-1', { messageId: 'm-2' })).issues[0]?.path).toBe('messageId');
    expect(refusal(() => parseMessageLookup('by-id', { messageId: '' })).issues[0]?.path).toBe('messageId');
    expect(refusal(() => parseMessageLookup('by-id', { messageId: ['a', 'b'] })).issues[0]?.path).toBe('messageId');
    expect(refusal(() => parseMessageLookup('m-1', { id: 'x' })).issues[0]?.path).toBe('id');
  });
});
