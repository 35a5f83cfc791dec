/**
 * Date-times as the real Segment clients put them on the wire, read into epoch
 * milliseconds (UTC):
 *
 * - analytics-go v2 formats with strftime `%Y-%m-%dT%H:%M:%S%z`: whole seconds and an
 *   offset without a colon, `2006-01-02T15:04:05-0700`;
 * - analytics.js, analytics-node and the mobile libraries send `toISOString()`:
 *   milliseconds and `Z`;
 * - analytics-python sends `isoformat()`: microseconds and `+00:00`;
 * - analytics-ruby and the Java library send ISO-8601 with milliseconds and an offset.
 *
 * So the grammar is ISO-8601 / RFC 3339 with some latitude: `T`, `t` or a space between
 * date and time, seconds optional, a fraction of any length (`.` or `,`), and a zone of
 * `Z`, `±hh:mm`, `±hhmm` or `±hh`. A date-time without a zone is read as UTC (Python's
 * `isoformat()` of a naive datetime looks like that); a bare date is midnight UTC.
 * Fractions beyond milliseconds are truncated, not rounded, so the order of events
 * within one millisecond is never reversed. JSON numbers are not accepted: no Segment
 * client sends them, and a bare number could as well be seconds as milliseconds.
 */

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysIn(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Epoch milliseconds of a client timestamp, or undefined when it is not one this accepts. */
export function parseTimestamp(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = h === undefined ? 0 : Number(h);
  const minute = mi === undefined ? 0 : Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));

  let offsetMs = 0;
  if (sign !== undefined && zulu === undefined) {
    const oh = Number(offsetHours);
    const om = offsetMinutes === undefined ? 0 : Number(offsetMinutes);
    if (oh > 23 || om > 59) return undefined;
    offsetMs = (sign === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }

  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear takes the year literally.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime() - offsetMs;
}
