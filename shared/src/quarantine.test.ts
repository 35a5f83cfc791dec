import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AvroDecodeError } from './avro.js';
import { createQuarantineCounter, QUARANTINE_REASONS, QUARANTINE_VALUE_BYTES_KEPT, quarantineRecord, undecodableCause, zeroQuarantineSeries } from './quarantine.js';

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

describe('createQuarantineCounter', () => {
  const series = async (registry: Registry) =>
    (await registry.getSingleMetricAsString('tributary_quarantined_total')).split('\n').filter((line) => line !== '' && !line.startsWith('#'));

  it('exposes every reason of every consumed topic at 0 before any record is quarantined', async () => {
    const registry = new Registry();
    createQuarantineCounter(registry, ['t.ingest.v1', 't.ingest.overflow.v1']);
    const lines = await series(registry);
    expect(lines).toHaveLength(2 * QUARANTINE_REASONS.length);
    for (const topic of ['t.ingest.v1', 't.ingest.overflow.v1']) {
      for (const reason of QUARANTINE_REASONS) expect(lines).toContain(`tributary_quarantined_total{topic="${topic}",reason="${reason}"} 0`);
    }
  });

  it('adds the series of a topic consumed later at 0, and counts from there', async () => {
    const registry = new Registry();
    const counter = createQuarantineCounter(registry, []);
    zeroQuarantineSeries(counter, 't.retry.2h.v1');
    counter.inc({ topic: 't.retry.2h.v1', reason: 'not_framed' });
    const lines = await series(registry);
    expect(lines).toHaveLength(QUARANTINE_REASONS.length);
    expect(lines).toContain('tributary_quarantined_total{topic="t.retry.2h.v1",reason="not_framed"} 1');
    expect(lines).toContain('tributary_quarantined_total{topic="t.retry.2h.v1",reason="too_large"} 0');
  });
});
