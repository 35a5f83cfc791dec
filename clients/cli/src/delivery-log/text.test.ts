import { describe, expect, it } from 'vitest';
import { cell, duration, percent, plural, printable, quoted } from './text.js';

describe('printable', () => {
  it('shows control characters and bidi overrides as escapes instead of letting them act on the terminal', () => {
    expect(printable('\u001b[31mred\u001b[0m')).toBe('\\u001b[31mred\\u001b[0m');
    expect(printable('two\nlines\tand\r')).toBe('two\\nlines\\tand\\r');
    expect(printable('a\u0085b\u009bc\u007f')).toBe('a\\u0085b\\u009bc\\u007f');
    expect(printable('user\u202eevil')).toBe('user\\u202eevil');
    expect(printable('plain text, ümlauts and emoji 🚀')).toBe('plain text, ümlauts and emoji 🚀');
  });
});

describe('cell and quoted', () => {
  it('prints nothing as a dash and cuts long texts', () => {
    expect([cell(null), cell(undefined), cell(''), cell(0), cell('crm\n')]).toEqual(['-', '-', '-', '0', 'crm\\n']);
    expect(quoted('say "hi"\n', 80)).toBe('"say \\"hi\\"\\n"');
    expect(quoted('abcdef', 3)).toBe('"abc…"');
  });
});

describe('duration', () => {
  it('reads at a glance from milliseconds to hours', () => {
    expect([0, 850, 1_000, 10_234, 59_949, 59_950, 245_000, 3_599_600, 7_620_000].map(duration)).toEqual([
      '0ms',
      '850ms',
      '1.0s',
      '10.2s',
      '59.9s',
      '1m00s',
      '4m05s',
      '1h00m',
      '2h07m',
    ]);
    expect(duration(null)).toBe('-');
  });
});

describe('percent and plural', () => {
  it('shows a rate with at most one decimal', () => {
    expect([percent(0.833), percent(1), percent(0), percent(0.5), percent(null)]).toEqual(['83.3%', '100%', '0%', '50%', '-']);
    expect([plural(1, 'attempt'), plural(2, 'attempt'), plural(0, 'attempt')]).toEqual(['1 attempt', '2 attempts', '0 attempts']);
  });
});
