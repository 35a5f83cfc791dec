import { describe, expect, it } from 'vitest';
import { AttemptJsonStream, AttemptTable, attemptDetail, attemptLabel, statusCell, targetLine } from './attempts.js';
import { testAttempt, testDelivered, testTarget } from './test-answers.js';

const range = { since: '2026-11-25T09:00:00.000Z', until: '2026-11-25T11:00:00.000Z' };

describe('one attempt', () => {
  it('names what it was and its status, with `error` when a request got no HTTP status back', () => {
    expect([attemptLabel(testAttempt({ attempt: 3 })), attemptLabel(testAttempt({ kind: 'deferred' })), attemptLabel(testAttempt({ kind: 'preflight' }))]).toEqual(['#3', 'deferred', 'preflight']);
    expect(statusCell(testAttempt({ status: 503 }))).toBe('503');
    expect(statusCell(testAttempt({ status: null }))).toBe('error');
    expect(statusCell(testAttempt({ kind: 'preflight', status: null }))).toBe('-');
  });

  it('says why it ended as it did and what comes next', () => {
    expect(attemptDetail(testAttempt())).toBe('webhooks[0] https://hooks.example.com: HTTP 503; next attempt 2026-11-25T10:00:10.112Z (tier 10s)');
    expect(attemptDetail(testDelivered())).toBe('');
    expect(attemptDetail(testAttempt({ kind: 'deferred', outcome: 'deferred', error: null, deferReason: 'circuit_open', tier: null }))).toBe(
      'deferred: circuit_open; next attempt 2026-11-25T10:00:10.112Z',
    );
    // The dispatcher's deferral error already says it was deferred.
    expect(attemptDetail(testAttempt({ kind: 'deferred', outcome: 'deferred', error: 'deferred: circuit open; last error: HTTP 503', deferReason: 'circuit_open', nextAttemptAt: null }))).toBe(
      'deferred: circuit open; last error: HTTP 503',
    );
    expect(attemptDetail(testAttempt({ outcome: 'dead', error: 'HTTP 410 (Gone)', deadReason: 'gone', nextAttemptAt: null, tier: null, replays: 2 }))).toBe(
      'HTTP 410 (Gone); dead letter: gone; replayed 2 times before',
    );
  });

  it("prints each URL's result, its body quoted and cut, without repeating a bare status as the error", () => {
    expect(targetLine(testTarget())).toBe('webhooks[0] https://hooks.example.com: http_error 503 in 11ms; body "busy, try later"');
    expect(targetLine(testTarget({ urlIndex: 1, status: 429, error: 'HTTP 429', retryAfterMs: 30_000, responseBody: 'x'.repeat(100) }))).toBe(
      `webhooks[1] https://hooks.example.com: http_error 429 in 11ms; retry after 30.0s; body "${'x'.repeat(80)}…"`,
    );
    expect(targetLine(testTarget({ outcome: 'timeout', status: null, error: 'timeout: no complete answer within 10000 ms', durationMs: 10_000, responseBody: null }))).toBe(
      'webhooks[0] https://hooks.example.com: timeout in 10.0s; timeout: no complete answer within 10000 ms',
    );
    expect(targetLine(testTarget({ responseBody: '\u001b[2J{"ok":false}' }))).toContain('body "\\u001b[2J{\\"ok\\":false}"');
  });
});

describe('AttemptTable', () => {
  it('prints the header once, each detail beneath its row, and widths fixed by the first page', () => {
    const table = new AttemptTable();
    expect(table.page([testDelivered(), testAttempt()])).toEqual([
      'STARTED AT                DESTINATION  MESSAGE  ATTEMPT  OUTCOME    STATUS  DURATION  ID',
      '2026-11-25T10:00:10.200Z  crm          m-1      #2       delivered  200     8ms       1-57',
      '2026-11-25T10:00:00.100Z  crm          m-1      #1       retry      503     12ms      1-42',
      '  webhooks[0] https://hooks.example.com: HTTP 503; next attempt 2026-11-25T10:00:10.112Z (tier 10s)',
    ]);
    expect(table.page([testDelivered({ destinationId: 'a-much-longer-destination', id: '0-7' })])).toEqual([
      '2026-11-25T10:00:10.200Z  a-much-longer-destination  m-1      #2       delivered  200     8ms       0-7',
    ]);
    expect(table.footer(range, null)).toBe('3 attempts from 2026-11-25T09:00:00.000Z to 2026-11-25T11:00:00.000Z, newest first');
  });

  it('says when more match, and when nothing does', () => {
    const table = new AttemptTable();
    table.page([testDelivered()]);
    expect(table.footer(range, 'eyJhIjpbMSwyLDNdfQ')).toBe(
      '1 attempt from 2026-11-25T09:00:00.000Z to 2026-11-25T11:00:00.000Z, newest first; more match: --all lists them all, --cursor eyJhIjpbMSwyLDNdfQ the next page',
    );
    const empty = new AttemptTable();
    expect(empty.page([])).toEqual([]);
    expect(empty.footer(range, null)).toBe('no attempts match from 2026-11-25T09:00:00.000Z to 2026-11-25T11:00:00.000Z');
  });
});

describe('AttemptJsonStream', () => {
  const streamed = (pages: ReturnType<typeof testAttempt>[][]) => {
    let text = '';
    const stream = new AttemptJsonStream((line) => (text += `${line}\n`));
    for (const page of pages) stream.add(page);
    stream.end();
    return text;
  };

  it('writes exactly what JSON.stringify writes for the answer holding every page', () => {
    const pages = [[testDelivered(), testAttempt()], [], [testAttempt({ id: '0-1', error: 'a "quoted"\nerror' })]];
    expect(streamed(pages)).toBe(`${JSON.stringify({ attempts: pages.flat(), nextCursor: null }, null, 2)}\n`);
    expect(streamed([])).toBe(`${JSON.stringify({ attempts: [], nextCursor: null }, null, 2)}\n`);
    expect(streamed([[testDelivered()]])).toBe(`${JSON.stringify({ attempts: [testDelivered()], nextCursor: null }, null, 2)}\n`);
  });
});
