import { describe, expect, it } from 'vitest';
import { mapAttempts, mapMessages, offsetsOf, poisonRecords, rowCount, rowsOf } from './plan.js';
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
    expect(rows.states.map((row) => row.deliveryId)).toEqual(['crm/m-1']);
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
