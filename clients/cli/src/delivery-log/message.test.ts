import { describe, expect, it } from 'vitest';
import type { MessageHistory } from './answers.js';
import { deliveryState, formatMessageHistory, groupByDelivery, messageLine } from './message.js';
import { testAttempt, testDelivered, testDeliveryStatus, testIndexedMessage, testTarget } from './test-answers.js';

const history = (fields: Partial<MessageHistory> = {}): MessageHistory => ({
  messageId: 'm-1',
  messages: [testIndexedMessage()],
  routing: [
    { sourceId: 'web', destinationId: 'crm', decision: 'routed', reason: null },
    { sourceId: 'web', destinationId: 'old', decision: 'filtered', reason: 'destination_disabled' },
  ],
  deliveries: [testDeliveryStatus()],
  attempts: [testAttempt(), testDelivered()],
  ...fields,
});

describe('formatMessageHistory', () => {
  it('prints the message, the routing per destination, and each delivery over its attempt timeline', () => {
    expect(formatMessageHistory(history())).toEqual([
      'message m-1',
      '  source web · track "Signed Up" · user u-1 · received 2026-11-25T10:00:00.000Z · timestamp 2026-11-25T09:59:59.500Z',
      '    {',
      '      "messageId": "m-1",',
      '      "type": "track",',
      '      "event": "Signed Up",',
      '      "properties": {',
      '        "plan": "pro"',
      '      }',
      '    }',
      '',
      'routing',
      '  SOURCE  DESTINATION  DECISION  REASON',
      '  web     crm          routed    -',
      '  web     old          filtered  destination_disabled',
      '',
      'delivery to crm (source web): delivered at 2026-11-25T10:00:10.208Z after 2 attempts, 10.2s after it was received',
      '  TIME                      ATTEMPT  OUTCOME    STATUS  DURATION  DETAIL',
      '  2026-11-25T10:00:00.100Z  #1       retry      503     12ms      webhooks[0] https://hooks.example.com: HTTP 503; next attempt 2026-11-25T10:00:10.112Z (tier 10s)',
      '      webhooks[0] https://hooks.example.com: http_error 503 in 11ms; body "busy, try later"',
      '  2026-11-25T10:00:10.200Z  #2       delivered  200     8ms',
      '      webhooks[0] https://hooks.example.com: success 200 in 8ms; body "thanks"',
    ]);
  });

  it('shows a routing decision about the whole message, a pending delivery, and attempts whose state is not indexed yet', () => {
    const lines = formatMessageHistory(
      history({
        routing: [{ sourceId: 'web', destinationId: null, decision: 'filtered', reason: 'no_destinations' }],
        deliveries: [testDeliveryStatus({ deliveryId: 'analytics/m-1', destinationId: 'analytics', state: 'pending', attempts: 0, deliveredAt: null, latencyMs: null })],
        attempts: [testAttempt({ deliveryId: 'crm/m-1', targets: [testTarget({ urlIndex: 0 }), testTarget({ urlIndex: 1, origin: 'https://backup.example.com' })] })],
      }),
    );
    expect(lines).toContain('  web     (all)        filtered  no_destinations');
    expect(lines).toContain('delivery to analytics (source web): pending: routed, no attempt yet');
    const crm = lines.indexOf('delivery to crm (source web): state not indexed yet');
    expect(crm).toBeGreaterThan(0);
    expect(lines.slice(crm + 3, crm + 5)).toEqual([
      '      webhooks[0] https://hooks.example.com: http_error 503 in 11ms; body "busy, try later"',
      '      webhooks[1] https://backup.example.com: http_error 503 in 11ms; body "busy, try later"',
    ]);
  });

  it('says so when the message itself is not in the log, and when nothing was routed', () => {
    const lines = formatMessageHistory(history({ messages: [], routing: [], deliveries: [], attempts: [] }));
    expect(lines).toEqual([
      'message m-1',
      '  not in the log itself (not indexed yet, or past retention): only its attempts are',
      '',
      'routing',
      '  no routing decision in the log',
      '',
      'no deliveries',
    ]);
  });

  it('escapes what producers and receivers sent rather than letting it act on the terminal', () => {
    const text = formatMessageHistory(
      history({
        messageId: 'm-\u001b[2J',
        messages: [testIndexedMessage({ event: 'Evil\u001b]0;owned\u0007', message: { note: 'bidi \u202e here', c1: '\u009b' } })],
      }),
    ).join('\n');
    expect(text).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    expect(text).toContain('message m-\\u001b[2J');
    expect(text).toContain('track "Evil\\u001b]0;owned\\u0007"');
  });
});

describe('deliveryState', () => {
  it('says where each state stands', () => {
    expect(deliveryState(testDeliveryStatus({ state: 'retrying', attempts: 1, nextAttemptAt: '2026-11-25T10:00:10.112Z', lastStatus: 503, lastError: 'HTTP 503', deliveredAt: null, latencyMs: null }))).toBe(
      'retrying: 1 attempt so far, next attempt 2026-11-25T10:00:10.112Z; last error: HTTP 503',
    );
    expect(deliveryState(testDeliveryStatus({ state: 'deferred', attempts: 3, nextAttemptAt: '2026-11-25T10:05:00.000Z', lastStatus: 503, lastError: null }))).toBe(
      'deferred without a request: 3 attempts so far, next attempt 2026-11-25T10:05:00.000Z; last status 503',
    );
    expect(deliveryState(testDeliveryStatus({ state: 'dead', attempts: 1, lastStatus: 410, lastError: 'HTTP 410 (Gone)' }))).toBe('dead after 1 attempt; last error: HTTP 410 (Gone)');
  });
});

describe('messageLine and groupByDelivery', () => {
  it('names an anonymous visitor, and keeps the deliveries of two sources sending one message id apart', () => {
    expect(messageLine(testIndexedMessage({ userId: null, anonymousId: 'a-9', event: null, type: 'page' }))).toBe(
      'source web · page · anonymous a-9 · received 2026-11-25T10:00:00.000Z · timestamp 2026-11-25T09:59:59.500Z',
    );
    const groups = groupByDelivery({
      deliveries: [testDeliveryStatus(), testDeliveryStatus({ sourceId: 'app' })],
      attempts: [testAttempt({ sourceId: 'app' }), testAttempt(), testDelivered()],
    });
    expect(groups.map((group) => [group.sourceId, group.attempts.map((attempt) => attempt.id)])).toEqual([
      ['web', ['1-42', '1-57']],
      ['app', ['1-42']],
    ]);
  });
});
