import { describe, expect, it } from 'vitest';
import { mapAttempts, mapMessages, mapMessagesWhenCurrent, offsetsOf, poisonRecords, rowCount, rowsOf } from './plan.js';
import { testAttempt, testConfig, testDestination, testMessage, testSource } from './test-records.js';

const raw = (offset: number) => ({ offset: String(offset), key: null, value: Buffer.from('x'), timestamp: '0' });
const config = testConfig([testSource()], [testDestination('crm')]);

describe('planning a chunk', () => {
  it('turns records into rows and sets aside the poison with its reason', () => {
    const mapped = mapAttempts(2, [
      { raw: raw(5), value: testAttempt({ messageId: 'm-1', destinationId: 'crm' }) },
      { raw: raw(6), poison: { reason: 'not_framed', error: 'not Avro' } },
      { raw: raw(7), value: testAttempt({ messageId: 'm-2', destinationId: 'crm', startedAt: Number.NaN }) },
    ]);
    const rows = rowsOf(mapped);
    expect(rows.attempts.map((row) => [row.partition, row.offset])).toEqual([[2, 5]]);
    expect(rows.states.map((row) => row.deliveryId)).toEqual(['crm/web/m-1']);
    expect(rowCount(rows)).toBe(1);
    expect(poisonRecords(mapped).map(({ raw: record, poison }) => [record.offset, poison.reason])).toEqual([
      ['6', 'not_framed'],
      ['7', 'invalid_timestamp'],
    ]);
  });

  it('makes a row per message and no delivery rows: pending deliveries are read from the routing', () => {
    const rows = rowsOf(mapMessages(0, [{ raw: raw(1), value: testMessage({ messageId: 'b' }) }, { raw: raw(2), value: testMessage({ messageId: 'a' }) }], config));
    expect(rows.messages.map((row) => row.messageId)).toEqual(['b', 'a']);
    expect(rows.states).toEqual([]);
    expect(rows.attempts).toEqual([]);
  });
});

describe('routing a chunk of messages with a config view that lags the router', () => {
  it('waits for the view to hold what was written before the newest receipt, then routes with it', async () => {
    // The view does not have the destination yet: the router created it, then routed the messages.
    const destinations: ReturnType<typeof testDestination>[] = [];
    const lagging = testConfig([testSource()], destinations);
    const asked: number[] = [];
    const freshness = {
      caughtUpSince: async (since: number) => {
        asked.push(since);
        await new Promise((resolve) => setTimeout(resolve, 5));
        destinations.push(testDestination('crm'));
      },
    };
    const mapped = await mapMessagesWhenCurrent(
      0,
      [
        { raw: raw(1), value: testMessage({ messageId: 'older', receivedAt: 1_000 }) },
        { raw: raw(2), poison: { reason: 'not_framed', error: 'not Avro' } },
        { raw: raw(3), value: testMessage({ messageId: 'newer', receivedAt: 2_000 }) },
      ],
      lagging,
      freshness,
    );
    expect(asked).toEqual([2_000]);
    expect(rowsOf(mapped).messages.map((row) => [row.messageId, row.routing.map((entry) => [entry.destinationId, entry.decision])])).toEqual([
      ['older', [['crm', 'routed']]],
      ['newer', [['crm', 'routed']]],
    ]);
    // Without the wait, the same view routes the same message nowhere.
    destinations.length = 0;
    expect(rowsOf(mapMessages(0, [{ raw: raw(1), value: testMessage({ messageId: 'older', receivedAt: 1_000 }) }], lagging)).messages[0]!.routing.map((entry) => entry.decision)).not.toContain('routed');
  });

  it('asks nothing of the view for a chunk of poison alone', async () => {
    const asked: number[] = [];
    const mapped = await mapMessagesWhenCurrent(0, [{ raw: raw(1), poison: { reason: 'not_framed', error: 'not Avro' } }], config, { caughtUpSince: async (since) => void asked.push(since) });
    expect(asked).toEqual([]);
    expect(poisonRecords(mapped)).toHaveLength(1);
  });
});

describe('offsetsOf', () => {
  it('commits each partition of each topic once, at its furthest offset', () => {
    expect(
      offsetsOf([
        { topic: 'a', partition: 0, nextOffset: '10' },
        { topic: 'b', partition: 0, nextOffset: '7' },
        { topic: 'a', partition: 1, nextOffset: '3' },
        { topic: 'a', partition: 0, nextOffset: '12' },
      ]),
    ).toEqual([
      { topic: 'a', partitions: [{ partition: 0, offset: '12' }, { partition: 1, offset: '3' }] },
      { topic: 'b', partitions: [{ partition: 0, offset: '7' }] },
    ]);
  });
});
