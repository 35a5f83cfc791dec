import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './timestamps.js';

const at = (iso: string) => Date.parse(iso);

describe('parseTimestamp', () => {
  it.each([
    ['analytics-go v2, offset without colon', '2006-01-02T15:04:05-0700', at('2006-01-02T22:04:05.000Z')],
    ['analytics-go v2, UTC', '2024-03-01T10:00:00+0000', at('2024-03-01T10:00:00.000Z')],
    ['toISOString(): milliseconds and Z', '2024-03-01T10:00:00.123Z', at('2024-03-01T10:00:00.123Z')],
    ['lower-case z and t', '2024-03-01t10:00:00.123z', at('2024-03-01T10:00:00.123Z')],
    ['offset with colon', '2024-03-01T12:30:00.5+02:30', at('2024-03-01T10:00:00.500Z')],
    ['hours-only offset', '2024-03-01T05:00:00-05', at('2024-03-01T10:00:00.000Z')],
    ['Python isoformat(): microseconds, +00:00', '2024-03-01T10:00:00.123456+00:00', at('2024-03-01T10:00:00.123Z')],
    ['nanoseconds are truncated, not rounded', '2024-03-01T10:00:00.999999999Z', at('2024-03-01T10:00:00.999Z')],
    ['one fraction digit', '2024-03-01T10:00:00.1Z', at('2024-03-01T10:00:00.100Z')],
    ['comma as decimal sign', '2024-03-01T10:00:00,25Z', at('2024-03-01T10:00:00.250Z')],
    ['no seconds', '2024-03-01T10:00Z', at('2024-03-01T10:00:00.000Z')],
    ['no seconds, offset', '2024-03-01T10:00+0100', at('2024-03-01T09:00:00.000Z')],
    ['space separator', '2024-03-01 10:00:00Z', at('2024-03-01T10:00:00.000Z')],
    ['no zone is UTC', '2024-03-01T10:00:00.123456', at('2024-03-01T10:00:00.123Z')],
    ['bare date is midnight UTC', '2024-03-01', at('2024-03-01T00:00:00.000Z')],
    ['leap day', '2024-02-29T00:00:00Z', at('2024-02-29T00:00:00.000Z')],
    ['offset crossing the date line backwards', '2024-01-01T00:30:00+0100', at('2023-12-31T23:30:00.000Z')],
    ['years below 100 are literal', '0099-01-01T00:00:00Z', at('0099-01-01T00:00:00.000Z')],
  ])('%s: %s', (_label, text, expected) => {
    expect(parseTimestamp(text)).toBe(expected);
  });

  it.each([
    ['empty', ''],
    ['garbage', 'yesterday'],
    ['epoch digits in a string', '1709287200000'],
    ['month 13', '2024-13-01T00:00:00Z'],
    ['day 0', '2024-03-00T00:00:00Z'],
    ['30 February', '2024-02-30T00:00:00Z'],
    ['29 February outside a leap year', '2023-02-29T00:00:00Z'],
    ['29 February 1900 (not a leap year)', '1900-02-29T00:00:00Z'],
    ['hour 24', '2024-03-01T24:00:00Z'],
    ['minute 60', '2024-03-01T10:60:00Z'],
    ['second 60', '2024-03-01T10:00:60Z'],
    ['offset minutes 60', '2024-03-01T10:00:00+01:60'],
    ['offset hours 24', '2024-03-01T10:00:00+2400'],
    ['three-digit offset', '2024-03-01T10:00:00+010'],
    ['fraction without digits', '2024-03-01T10:00:00.Z'],
    ['two-digit year', '24-03-01T10:00:00Z'],
    ['zone on a bare date', '2024-03-01Z'],
    ['trailing text', '2024-03-01T10:00:00Z extra'],
    ['RFC 2822', 'Fri, 01 Mar 2024 10:00:00 GMT'],
  ])('rejects %s: %j', (_label, text) => {
    expect(parseTimestamp(text)).toBeUndefined();
  });
});
