import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['100ms', 100],
    ['10s', 10_000],
    ['1m', 60_000],
    ['4h', 14_400_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['2d', 172_800_000],
    [' 5s ', 5000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', '10 s', 's', '1x', '-1s', '1h 30m'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/duration/);
  });
});

describe('formatDuration', () => {
  it.each([
    [100, '100ms'],
    [1500, '1500ms'],
    [10_000, '10s'],
    [90_000, '90s'],
    [60_000, '1m'],
    [3_600_000, '1h'],
    [0, '0ms'],
  ])('%d → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
