import { describe, expect, it } from 'vitest';
import {
  attemptAnswer,
  circuitLabel,
  displayUrl,
  durationBetween,
  formatCount,
  formatDuration,
  formatPercent,
  formatRelative,
  formatTime,
  maskKey,
  shortId,
  NONE,
  prettyJson,
  statusTone,
  toneOf,
  truncate,
} from './format';

describe('times and durations', () => {
  it('shows ISO times in UTC without the T and Z', () => {
    expect(formatTime('2026-11-25T10:00:00.123Z')).toBe('2026-11-25 10:00:00.123');
    expect(formatTime('2026-11-25T11:00:00.000+01:00')).toBe('2026-11-25 10:00:00.000');
    expect(formatTime(null)).toBe(NONE);
    expect(formatTime('not a time')).toBe('not a time');
  });

  it('picks a unit a person reads at a glance', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(12.4)).toBe('12 ms');
    expect(formatDuration(999)).toBe('999 ms');
    expect(formatDuration(1_000)).toBe('1 s');
    expect(formatDuration(10_234)).toBe('10.2 s');
    expect(formatDuration(60_000)).toBe('1 min');
    expect(formatDuration(200_000)).toBe('3 min 20 s');
    expect(formatDuration(3_600_000)).toBe('1 h');
    expect(formatDuration(7_500_000)).toBe('2 h 5 min');
    expect(formatDuration(-1_500)).toBe('-1.5 s');
    expect(formatDuration(null)).toBe(NONE);
    expect(formatDuration(Number.NaN)).toBe(NONE);
  });

  it('measures between two times and relative to now', () => {
    expect(durationBetween('2026-11-25T10:00:00.000Z', '2026-11-25T10:00:10.234Z')).toBe('10.2 s');
    expect(durationBetween(null, '2026-11-25T10:00:00.000Z')).toBe(NONE);
    const now = Date.parse('2026-11-25T10:00:00.000Z');
    expect(formatRelative('2026-11-25T09:59:57.000Z', now)).toBe('3 s ago');
    expect(formatRelative('2026-11-25T10:02:00.000Z', now)).toBe('in 2 min');
    expect(formatRelative('2026-11-25T10:00:00.400Z', now)).toBe('just now');
  });
});

describe('numbers', () => {
  it('writes rates as percentages, the dash when there is none', () => {
    expect(formatPercent(0.833)).toBe('83.3%');
    expect(formatPercent(0.5)).toBe('50%');
    expect(formatPercent(1)).toBe('100%');
    expect(formatPercent(0)).toBe('0%');
    expect(formatPercent(null)).toBe(NONE);
  });

  it('groups thousands', () => {
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCount(0)).toBe('0');
    expect(formatCount(undefined)).toBe(NONE);
  });
});

describe('states', () => {
  it('labels and colours circuit states, delivery states and outcomes', () => {
    expect(circuitLabel('half_open')).toBe('half-open');
    expect(circuitLabel(null)).toBe('unknown');
    expect(toneOf('closed')).toBe('good');
    expect(toneOf('delivered')).toBe('good');
    expect(toneOf('open')).toBe('bad');
    expect(toneOf('dead')).toBe('bad');
    expect(toneOf('retry')).toBe('warn');
    expect(toneOf('deferred')).toBe('warn');
    expect(toneOf('pending')).toBe('neutral');
    expect(statusTone(204)).toBe('good');
    expect(statusTone(503)).toBe('bad');
    expect(statusTone(302)).toBe('bad');
    expect(statusTone(null)).toBe('neutral');
  });
});

describe('what may hold credentials', () => {
  it('masks user-info and query values of a webhook URL', () => {
    expect(displayUrl('https://hooks.example.com/segment')).toBe('https://hooks.example.com/segment');
    expect(displayUrl('https://user:pw@hooks.example.com:8443/in?token=abc&team=x')).toMatch(/^https:\/\/•••@hooks\.example\.com:8443\/in\?token=•••&team=••• \[[0-9a-f]{6}\]$/);
    expect(displayUrl('not a url?token=abc')).toBe('not a url');
  });

  it('masks every path segment after the first, where chat hooks put their token', () => {
    const slack = 'https://hooks.slack.com/services/T0001/B0002/XXXXsecretXXXX';
    expect(displayUrl(slack)).toMatch(/^https:\/\/hooks\.slack\.com\/services\/•••\/•••\/••• \[[0-9a-f]{6}\]$/);
    expect(displayUrl(slack)).not.toMatch(/T0001|B0002|secret/);
    expect(displayUrl('https://discord.com/api/webhooks/123/tok_en')).not.toMatch(/123|tok_en/);
    // A trailing slash hides nothing; the root is the root.
    expect(displayUrl('https://hooks.zapier.com/hooks/catch/1/abc/')).toMatch(/^https:\/\/hooks\.zapier\.com\/hooks\/•••\/•••\/•••\/ \[[0-9a-f]{6}\]$/);
    expect(displayUrl('https://example.com')).toBe('https://example.com/');
  });

  it('tells two masked URLs on one host apart, and shows one URL the same every time', () => {
    const first = displayUrl('https://hooks.slack.com/services/T1/B1/aaaa');
    const second = displayUrl('https://hooks.slack.com/services/T1/B1/bbbb');
    expect(first).not.toBe(second);
    expect(displayUrl('https://hooks.slack.com/services/T1/B1/aaaa')).toBe(first);
    expect(displayUrl('https://h.example/in?token=a')).not.toBe(displayUrl('https://h.example/in?token=b'));
  });

  it('shows a write key by its ends only', () => {
    expect(maskKey('wk_local_demo')).toBe('wk_l…emo');
    expect(maskKey('short')).toBe('•••••');
  });
});

describe('text', () => {
  it('truncates with an ellipsis and pretty-prints JSON', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyJson(undefined)).toBe('null');
  });
});

describe('attemptAnswer', () => {
  it('gives the status, with an error only when it says more', () => {
    const none = { status: null, error: null, deferReason: null, deadReason: null };
    expect(attemptAnswer({ ...none, status: 503, error: 'HTTP 503' })).toBe('503');
    expect(attemptAnswer({ ...none, status: 200 })).toBe('200');
    expect(attemptAnswer({ ...none, status: 429, error: 'HTTP 429, Retry-After 5 s' })).toBe('429 — HTTP 429, Retry-After 5 s');
    expect(attemptAnswer({ ...none, error: 'timeout after 5 s' })).toBe('timeout after 5 s');
    expect(attemptAnswer({ ...none, deferReason: 'circuit_open' })).toBe('circuit_open');
    expect(attemptAnswer(none)).toBe('—');
  });
});

describe('shortId', () => {
  it('keeps both ends of a long id', () => {
    const id = 'node-next-1795614529210-ccf3b7cf-0523-4bd0-853e-44a904f96dc1';
    expect(shortId(id, 32)).toBe('node-next-179561…3e-44a904f96dc1');
    expect(shortId(id, 32)).toHaveLength(32);
    expect(shortId('m-1')).toBe('m-1');
  });
});
