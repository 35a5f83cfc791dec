import { describe, expect, it } from 'vitest';
import { avroType, topicNames, type SchemaName } from '@tributary/schemas';
import { testDelivery } from '@tributary/test/harness';
import type { Destination } from '@tributary/schemas';
import type { AttemptFacts, TargetReport } from './attempt-log.js';
import { classifyResult } from './classify.js';
import { onGone, outcomeRecords, type Encoder } from './outcome-records.js';

const topics = topicNames('t');
/** Stands in for the Avro codec: the records' shapes are what is tested here, not Avro. */
const json: Encoder = { encode: (_topic, value) => Buffer.from(JSON.stringify(value, (_key, v: unknown) => (Buffer.isBuffer(v) ? v.toString() : v))) };
const origin = { topic: topics.deliveries, partition: 1, offset: 41n, readAt: 5 };
/** The real schemas, for what only Avro refuses. */
const schemaOf = (topic: string): SchemaName =>
  topic === topics.attempts ? 'attempt' : topic === topics.deliveries ? 'delivery' : topic === topics.quarantine ? 'quarantine' : topic === topics.deadLetters ? 'dlq' : 'retry';
const avro: Encoder = { encode: (topic, value) => avroType(schemaOf(topic)).toBuffer(value) };

function facts(body: Buffer, fields: Partial<AttemptFacts>): AttemptFacts {
  const delivery = testDelivery('crm', 'm-1', { body });
  return { delivery, lane: 'first', kind: 'attempt', attempt: 1, startedAt: 1, durationMs: 2, targets: [], settlement: { kind: 'delivered', status: 200 }, ...fields };
}

const retry = (delivery: AttemptFacts['delivery']) => ({ kind: 'retry', record: { delivery, dueAt: 10, tier: '10s' } }) as const;

describe('outcomeRecords', () => {
  it('writes the retry record and the attempt record of a failed attempt', () => {
    const attempt = facts(Buffer.from('{}'), {});
    const { outputs, result, tooLarge } = outcomeRecords(json, topics, 1_000_000, { ...attempt, settlement: retry(attempt.delivery) }, origin);
    expect(outputs.map((o) => o.topic)).toEqual([topics.retry('10s'), topics.attempts]);
    expect(outputs.every((o) => o.key === attempt.delivery.deliveryId)).toBe(true);
    expect([result, tooLarge]).toEqual(['retry', false]);
  });

  it('logs no attempt record for a deferral that only moves the delivery up the ladder, but does for one that ends it', () => {
    const deferred = facts(Buffer.from('{}'), { kind: 'deferred', attempt: 0, deferReason: 'circuit_open' });
    const moved = outcomeRecords(json, topics, 1_000_000, { ...deferred, settlement: retry(deferred.delivery) }, origin);
    expect(moved.outputs.map((o) => o.topic)).toEqual([topics.retry('10s')]);
    expect(moved.result).toBe('deferred');
    const letter = { delivery: deferred.delivery, reason: 'expired', status: null, error: 'window', deadAt: 9 };
    const ended = outcomeRecords(json, topics, 1_000_000, { ...deferred, settlement: { kind: 'dead', letter } }, origin);
    expect(ended.outputs.map((o) => o.topic)).toEqual([topics.deadLetters, topics.attempts]);
    expect(ended.result).toBe('dead');
  });

  it('quarantines the delivery instead of writing an outcome record the broker would refuse', () => {
    const big = facts(Buffer.alloc(20_000, 'x'), {});
    const { outputs, result, tooLarge } = outcomeRecords(json, topics, 10_000, { ...big, settlement: retry(big.delivery) }, origin);
    expect([result, tooLarge]).toEqual(['dead', true]);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatchObject({ topic: topics.quarantine, key: `${topics.deliveries}/1/41` });
    const quarantined = JSON.parse(outputs[0]!.value!.toString()) as { reason: string; valueSize: number; service: string };
    expect(quarantined).toMatchObject({ reason: 'too_large', service: 'dispatcher' });
    expect(quarantined.valueSize).toBeGreaterThan(20_000);
  });

  it('quarantines the delivery instead of throwing when its outcome cannot be encoded', () => {
    // A Retry-After of 9,007,199,254,741 s once reached the attempt record as milliseconds past
    // Avro's exact longs: the encode threw outside any handler and the dispatcher exited, at
    // every restart, on the same unsettled delivery.
    const target: TargetReport = { index: 0, url: 'https://h.example/0', verdict: classifyResult({ kind: 'response', status: 503 }), durationMs: 1, body: undefined, retryAfterMs: 2 ** 60 };
    const attempt = facts(Buffer.from('{}'), { targets: [target] });
    const records = outcomeRecords(avro, topics, 1_000_000, { ...attempt, settlement: retry(attempt.delivery) }, origin);
    expect(records).toMatchObject({ result: 'dead', unencodable: true, tooLarge: false });
    expect(records.outputs).toHaveLength(1);
    expect(records.outputs[0]).toMatchObject({ topic: topics.quarantine, key: `${topics.deliveries}/1/41` });
    const quarantined = avroType('quarantine').fromBuffer(records.outputs[0]!.value!) as { reason: string; error: string; service: string };
    expect(quarantined).toMatchObject({ reason: 'unencodable', service: 'dispatcher' });
    expect(quarantined.error).toContain('could not be encoded');
  });

  it('encodes an ordinary attempt with the real schemas', () => {
    const attempt = facts(Buffer.from('{}'), {});
    const records = outcomeRecords(avro, topics, 1_000_000, { ...attempt, settlement: retry(attempt.delivery) }, origin);
    expect(records.unencodable).toBeUndefined();
    expect(records.outputs.map((o) => o.topic)).toEqual([topics.retry('10s'), topics.attempts]);
  });
});

describe('onGone', () => {
  const destination = (url: string, enabled = true): Destination => ({ id: 'crm', name: 'crm', type: 'webhooks', sources: [], enabled, settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url, headers: {} }] } });
  const answered = (...statuses: number[]): TargetReport[] =>
    statuses.map((status, index) => ({ index, url: `https://h.example/${index}`, verdict: classifyResult({ kind: 'response', status }), durationMs: 1, body: undefined, retryAfterMs: undefined }));
  const dead = (reason: 'gone' | 'http_status') => ({ kind: 'dead', letter: { delivery: testDelivery('crm', 'm-1'), reason, status: 410, error: 'HTTP 410 (Gone)', deadAt: 9 } }) as const;
  const attempted = destination('https://h.example/0');

  it('disables when every URL answered 410 and the destination is still as the attempt saw it (an equal copy will do)', () => {
    expect(onGone(dead('gone'), answered(410, 410), attempted, destination('https://h.example/0'))).toBe('disable');
  });

  it('does nothing unless every URL answered 410', () => {
    expect(onGone(dead('gone'), answered(410, 404), attempted, attempted)).toBe('none');
    expect(onGone(dead('http_status'), answered(404), attempted, attempted)).toBe('none');
    expect(onGone(dead('gone'), [], attempted, attempted)).toBe('none');
  });

  it('leaves a destination edited, disabled or deleted while the attempt ran as it is now', () => {
    expect(onGone(dead('gone'), answered(410), attempted, destination('https://h.example/new'))).toBe('config_changed');
    expect(onGone(dead('gone'), answered(410), attempted, destination('https://h.example/0', false))).toBe('config_changed');
    expect(onGone(dead('gone'), answered(410), attempted, undefined)).toBe('config_changed');
    expect(onGone(dead('gone'), answered(410), destination('https://h.example/0', false), undefined)).toBe('none');
  });
});
