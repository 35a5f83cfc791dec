import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@tributary/shared';
import { testDelivery } from '@tributary/test/harness/deliveries';
import type { AttemptOutcome } from './attempt.js';
import { AttemptLog, FAILED_ATTEMPT_INTERVAL_MS, FAILED_ATTEMPT_LINES } from './outcome-log.js';

const T0 = Date.UTC(2026, 0, 1);

const delivery = testDelivery('crm', 'm1', { userId: null, body: Buffer.from('{"event":"Signed Up","email":"someone@example.com"}'), receivedAt: T0 - 100, routedAt: T0 - 50 });

function outcome(settlement: AttemptOutcome['settlement'], status: number): AttemptOutcome {
  return {
    kind: 'attempt',
    attempt: 1,
    settlement,
    verdict: undefined,
    destination: undefined,
    startedAt: T0,
    durationMs: 12,
    targets: [
      {
        index: 0,
        url: 'https://hooks.example.com/secret-path?token=abc',
        verdict: status < 300 ? { class: 'success', status } : { class: 'retryable', kind: 'http_status', status, detail: `HTTP ${status}` },
        durationMs: 11,
        body: undefined,
        retryAfterMs: undefined,
      },
    ],
  };
}

const delivered = outcome({ kind: 'delivered', status: 200 }, 200);
const retry = outcome({ kind: 'retry', record: { delivery: { ...delivery, attempts: 1, lastStatus: 503, lastError: 'HTTP 503' }, dueAt: T0 + 10_000, tier: '10s' } }, 503);
const dead = outcome({ kind: 'dead', letter: { delivery, reason: 'http_status', status: 400, error: 'HTTP 400', deadAt: T0 } }, 400);

/** The lines `logAttempt` writes at `level`, parsed. */
function capture(level: 'info' | 'debug' | 'trace'): { log: AttemptLog; lines: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ service: 'dispatcher', level, destination });
  return { log: new AttemptLog(logger), lines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

function linesAt(level: 'info' | 'debug' | 'trace', attempt: AttemptOutcome): Array<Record<string, unknown>> {
  const { log, lines } = capture(level);
  log.log(delivery, 'first', attempt);
  return lines();
}

describe('AttemptLog', () => {
  it('at info writes a line for each attempt that did not deliver, and none for a delivered one', () => {
    expect(linesAt('info', delivered)).toEqual([]);
    expect(linesAt('info', retry)).toMatchObject([{ level: 'info', result: 'retry', messageId: 'm1', destinationId: 'crm', statusClass: '5xx', tier: '10s', reason: 'HTTP 503' }]);
    expect(linesAt('info', dead)).toMatchObject([{ level: 'info', result: 'dead', reason: 'http_status', error: 'HTTP 400' }]);
  });

  it('at debug also writes delivered attempts, still without the body', () => {
    expect(linesAt('debug', delivered)).toMatchObject([{ level: 'debug', result: 'delivered', statusClass: '2xx', urls: [{ target: 'webhooks[0]', outcome: 'success', status: 200 }] }]);
    expect(JSON.stringify(linesAt('debug', retry))).not.toContain('someone@example.com');
  });

  it('writes the body only at trace, and a URL never beyond its index', () => {
    const lines = linesAt('trace', delivered);
    expect(lines.map((line) => line['msg'])).toEqual(['delivered', 'delivery body']);
    expect(lines[1]).toMatchObject({ level: 'trace', body: delivery.body.toString('utf8') });
    expect(JSON.stringify(lines)).not.toMatch(/secret-path|token=abc|hooks\.example\.com/);
  });

  it('logs the first failures of each destination one by one, then counts the rest and says how many in one line', () => {
    const { log, lines } = capture('info');
    const other = { ...delivery, deliveryId: 'billing/m1', destinationId: 'billing' };
    for (let index = 0; index < 25; index++) log.log(delivery, 'first', index % 2 ? retry : dead);
    for (let index = 0; index < 3; index++) log.log(other, 'first', retry);
    const oneByOne = lines();
    expect(oneByOne.filter((line) => line['destinationId'] === 'crm')).toHaveLength(FAILED_ATTEMPT_LINES);
    expect(oneByOne.filter((line) => line['destinationId'] === 'billing')).toHaveLength(3);
    log.stop();
    expect(lines().slice(oneByOne.length)).toMatchObject([{ level: 'info', destinationId: 'crm', count: 25, notLogged: 25 - FAILED_ATTEMPT_LINES, intervalMs: FAILED_ATTEMPT_INTERVAL_MS }]);
    // A new interval has a budget again.
    log.log(delivery, 'first', retry);
    expect(lines().at(-1)).toMatchObject({ result: 'retry', destinationId: 'crm' });
  });
});
