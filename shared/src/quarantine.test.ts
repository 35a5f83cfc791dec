import { describe, expect, it } from 'vitest';
import { AvroDecodeError } from './avro.js';
import { QUARANTINE_VALUE_BYTES_KEPT, quarantineRecord, undecodableCause } from './quarantine.js';

const poison = { topic: 't.deliveries.v1', partition: 2, offset: '41', key: Buffer.from('d/m'), value: Buffer.from('garbage'), timestamp: '1700000000000' };

describe('quarantineRecord', () => {
  it('keeps the original record, where it came from and why', () => {
    const record = quarantineRecord('dispatcher', poison, { reason: 'not_framed', error: 'no magic byte' }, 5);
    expect(record).toEqual({
      service: 'dispatcher',
      sourceTopic: 't.deliveries.v1',
      partition: 2,
      offset: 41,
      reason: 'not_framed',
      error: 'no magic byte',
      key: Buffer.from('d/m'),
      value: Buffer.from('garbage'),
      valueSize: 7,
      recordTimestamp: 1_700_000_000_000,
      quarantinedAt: 5,
    });
  });

  it('cuts a large value so the quarantine record always fits a produce request, and says how large it was', () => {
    const value = Buffer.alloc(3 * 1024 * 1024, 1);
    const record = quarantineRecord('router', { ...poison, value }, { reason: 'too_large', error: 'x'.repeat(10_000) }, 5);
    expect(record.value).toHaveLength(QUARANTINE_VALUE_BYTES_KEPT);
    expect(record.valueSize).toBe(value.length);
    expect(record.error.length).toBeLessThan(2100);
  });
});

describe('undecodableCause', () => {
  it('names permanent decode failures and leaves transient ones to be retried', () => {
    expect(undecodableCause(new AvroDecodeError('unknown_schema', 'schema id 9 is not in the registry'))).toEqual({
      reason: 'unknown_schema',
      error: 'schema id 9 is not in the registry',
    });
    expect(undecodableCause(new Error('connect ECONNREFUSED 127.0.0.1:8081'))).toBeUndefined();
  });
});
