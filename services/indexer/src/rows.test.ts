import { describe, expect, it } from 'vitest';
import { attemptRow, deliveryStateOf, foldDeliveryStates, messageRow, safeText, Unindexable } from './rows.js';
import { testAttempt, testConfig, testDestination, testMessage, testSource } from './test-records.js';

const T = 1_764_064_800_000;

describe('safeText', () => {
  it('replace what PostgreSQL refuses, and leave everything else alone', () => {
    expect(safeText('plain ✓ text')).toBe('plain ✓ text');
    expect(safeText('a\u0000b')).toBe('a\uFFFDb');
    expect(safeText('x\uD800y\uDC00')).toBe('x\uFFFDy\uFFFD');
    expect(safeText('😀')).toBe('😀');
  });
});

describe('attemptRow', () => {
  it('keeps the record, its Kafka position, and the response body as text', () => {
    const record = testAttempt({ messageId: 'm-1', destinationId: 'crm', startedAt: T, status: 503, outcome: 'retry' });
    record.targets[0]!.responseBody = Buffer.from([0x6f, 0x6b, 0xff]);
    const row = attemptRow(record, 3, 1042);
    expect(row).toMatchObject({ partition: 3, offset: 1042, deliveryId: 'crm/web/m-1', startedAt: T, status: 503, outcome: 'retry' });
    expect(row.targets[0]?.responseBody).toBe('ok\uFFFD');
  });

  it('refuses a record no row can hold', () => {
    expect(() => attemptRow(testAttempt({ messageId: '', destinationId: 'crm' }), 0, 0)).toThrow(Unindexable);
    expect(() => attemptRow(testAttempt({ messageId: 'm', destinationId: 'crm', startedAt: 9e15 }), 0, 0)).toThrow(/startedAt is not a valid time/);
  });
});

describe('foldDeliveryStates', () => {
  const rows = [
    attemptRow(testAttempt({ messageId: 'm-1', destinationId: 'crm', startedAt: T, receivedAt: T - 500, outcome: 'retry', status: 503, nextAttemptAt: T + 10_000 }), 0, 10),
    attemptRow(testAttempt({ messageId: 'm-2', destinationId: 'crm', startedAt: T + 1, kind: 'deferred', outcome: 'deferred', status: null, targets: [] }), 0, 11),
    attemptRow(testAttempt({ messageId: 'm-1', destinationId: 'crm', startedAt: T + 10_000, receivedAt: T - 500, durationMs: 40, attempt: 2 }), 0, 12),
  ];

  it('gives one state per delivery: the last record, the first attempt, the delivering end', () => {
    expect(foldDeliveryStates(rows)).toEqual([
      expect.objectContaining({
        deliveryId: 'crm/web/m-1',
        state: 'delivered',
        attempts: 2,
        firstAttemptAt: T,
        lastAttemptAt: T + 10_000,
        nextAttemptAt: null,
        lastStatus: 200,
        deliveredAt: T + 10_040,
        latencyMs: 10_540,
        updatedAt: T + 10_000,
        lastPartition: 0,
        lastOffset: 12,
      }),
      expect.objectContaining({ deliveryId: 'crm/web/m-2', state: 'deferred', firstAttemptAt: null, lastOffset: 11 }),
    ]);
  });

  it('never lets an earlier record of a batch win', () => {
    expect(foldDeliveryStates([rows[2]!, rows[0]!])[0]).toMatchObject({ state: 'delivered', lastOffset: 12 });
  });

  it('names each outcome as a state', () => {
    expect(['delivered', 'retry', 'deferred', 'dead'].map(deliveryStateOf)).toEqual(['delivered', 'retrying', 'deferred', 'dead']);
  });
});

describe('messageRow', () => {
  const config = testConfig([testSource(), testSource({ id: 'off', enabled: false })], [testDestination('crm'), testDestination('old', { enabled: false }), testDestination('bi')]);

  it("reports the router's decision per destination", () => {
    const { message } = messageRow(testMessage({ messageId: 'm-1', receivedAt: T }), 1, 7, config);
    expect(message.routing).toEqual([
      { sourceId: 'web', destinationId: 'crm', decision: 'routed', reason: null },
      { sourceId: 'web', destinationId: 'bi', decision: 'routed', reason: null },
      { sourceId: 'web', destinationId: 'old', decision: 'filtered', reason: 'destination_disabled' },
    ]);
  });

  it('reads the integrations object top-level or from the context, as the router does', () => {
    const top = messageRow(testMessage({ messageId: 'm', integrations: '{"Webhooks":false}' }), 0, 0, config);
    expect(top.message.routing.filter((entry) => entry.reason === 'integrations_off').map((entry) => entry.destinationId)).toEqual(['crm', 'bi']);
    const nested = messageRow(testMessage({ messageId: 'm', context: '{"integrations":{"All":false}}' }), 0, 0, config);
    expect(nested.message.routing.every((entry) => entry.decision === 'filtered')).toBe(true);
    expect(messageRow(testMessage({ messageId: 'm', sourceId: 'off' }), 0, 0, config).message.routing).toEqual([
      { sourceId: 'off', destinationId: null, decision: 'filtered', reason: 'source_disabled' },
    ]);
    expect(messageRow(testMessage({ messageId: 'm', sourceId: 'ghost' }), 0, 0, config).message.routing[0]?.reason).toBe('no_destinations');
  });

  it('keeps the message as accepted: free-form parts parsed, times as ISO strings, nulls left out', () => {
    const { message } = messageRow(testMessage({ messageId: 'm-1', receivedAt: T, timestamp: T - 1000, sentAt: T - 10, properties: '{"plan":"pro"}', traits: 'not json' }), 0, 0, config);
    expect(message.message).toEqual({
      messageId: 'm-1',
      type: 'track',
      sourceId: 'web',
      userId: 'u-1',
      event: 'Signed Up',
      properties: { plan: 'pro' },
      // What a producer wrote that is not JSON is kept as it was, not dropped.
      traits: 'not json',
      context: { library: { name: 'test' } },
      timestamp: new Date(T - 1000).toISOString(),
      sentAt: new Date(T - 10).toISOString(),
      receivedAt: new Date(T).toISOString(),
    });
    expect(message).toMatchObject({ timestamp: T - 1000, receivedAt: T, partition: 0, offset: 0 });
  });

  it('refuses a message without ids or with an impossible time', () => {
    expect(() => messageRow(testMessage({ messageId: '' }), 0, 0, config)).toThrow(/messageId is missing/);
    expect(() => messageRow(testMessage({ messageId: 'm', timestamp: T, receivedAt: Number.MAX_SAFE_INTEGER }), 0, 0, config)).toThrow(/receivedAt/);
  });

  it("refuses free-form JSON nesting deeper than the router takes, before parsing it (too_deep)", () => {
    // The reviewer's record: a direct Avro producer's properties, 6,000 arrays deep. Written,
    // JSON.stringify overflowed the stack, and the partition stopped for good.
    const deep = '{"a":' + '['.repeat(6000) + ']'.repeat(6000) + '}';
    const refused = (() => {
      try {
        messageRow(testMessage({ messageId: 'm', properties: deep }), 0, 0, config);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(Unindexable);
    expect(refused).toMatchObject({ reason: 'too_deep', message: 'properties nests objects and arrays more than 64 levels deep' });
    expect(() => messageRow(testMessage({ messageId: 'm', traits: deep, context: deep }), 0, 0, config)).toThrow(/^traits, context nest objects and arrays more than 64/);
    // At the limit itself the message is kept as it was.
    const atLimit = '{"a":' + '['.repeat(63) + ']'.repeat(63) + '}';
    expect(messageRow(testMessage({ messageId: 'm', properties: atLimit }), 0, 0, config).message.message.properties).toEqual(JSON.parse(atLimit));
  });
});
