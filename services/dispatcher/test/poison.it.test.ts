/**
 * Records that can never be handled do not stop a partition: undecodable deliveries (not
 * framed, an unknown schema id, truncated Avro), or ones carrying a time no date holds, on
 * either lane go to the quarantine with their reason, and outcomes too large for the broker
 * are quarantined instead of wedging every transaction after them. Valid deliveries around them keep flowing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { eventually, newDelivery, TestPipeline, webhooksDestination } from './pipeline.js';
import { startReceiver, type Receiver } from './receivers.js';

const ladder = { delaysMs: [60_000], windowMs: 3_600_000 };

let pipeline: TestPipeline;
let dispatcher: RunningService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(({ path }) => (path.startsWith('/down') ? 503 : 200));
  pipeline = new TestPipeline(uniqueNamespace('poison'), ladder);
  await pipeline.start();
  await pipeline.putDestination(webhooksDestination('ok', [{ url: receiver.url('/ok') }]));
  await pipeline.putDestination(webhooksDestination('down', [{ url: receiver.url('/down') }]));
  dispatcher = await startService('dispatcher', { env: pipeline.env({ KAFKA_MAX_RECORD_BYTES: '300000' }) });
});

afterAll(async () => {
  await dispatcher?.stop();
  await pipeline?.stop();
  await receiver?.close();
});

const received = (body: Buffer) => receiver.requests.some((request) => request.body.equals(body));

describe('poison records', () => {
  it('quarantines undecodable records on both lanes with their reasons, and delivers the valid ones around them', async () => {
    const { topics, codec } = pipeline;
    const valid = codec.encode(topics.deliveries, newDelivery('ok', { type: 'track', event: 'template' }));
    const unknownSchema = Buffer.from(valid);
    unknownSchema.writeUInt32BE(1_999_999_999, 1);
    const poison: Array<[string, Buffer]> = [
      ['not_framed', Buffer.from('{"this is":"json, not avro"}')],
      ['unknown_schema', unknownSchema],
      ['undecodable', valid.subarray(0, 12)],
      // Decodes (Avro longs reach 2^53), but no date holds it: its retry window would never end.
      ['invalid_timestamp', codec.encode(topics.deliveries, newDelivery('ok', { type: 'track', event: 'from far ahead' }, { attempts: 1, firstAttemptAt: 8.7e15 }))],
    ];
    const before = await pipeline.deliverMany([{ destinationId: 'ok', body: { event: 'before' } }]);
    for (const topic of [topics.deliveries, topics.dueRetries]) {
      for (const [reason, value] of poison) await pipeline.sendRaw(topic, `ok/poison-${reason}`, value);
    }
    const after = [
      ...(await pipeline.deliverMany(Array.from({ length: 10 }, (_, n) => ({ destinationId: 'ok', body: { event: `after ${n}` } })))),
      ...(await pipeline.deliverMany(Array.from({ length: 10 }, (_, n) => ({ destinationId: 'ok', body: { event: `after retry ${n}` } })), 'retry')),
    ];
    await eventually(() => [...before, ...after].every((delivery) => received(delivery.body)), 'every valid delivery received');
    const quarantined = await eventually(() => pipeline.quarantined.length >= 8 && pipeline.quarantined, 'eight quarantined records');
    for (const topic of [topics.deliveries, topics.dueRetries]) {
      const reasons = quarantined.filter(({ value }) => value.sourceTopic === topic).map(({ value }) => value.reason).sort();
      expect(reasons, topic).toEqual(['invalid_timestamp', 'not_framed', 'undecodable', 'unknown_schema']);
    }
    const notFramed = quarantined.find(({ value }) => value.reason === 'not_framed')!.value;
    expect(notFramed).toMatchObject({ service: 'dispatcher', key: Buffer.from('ok/poison-not_framed'), value: poison[0]![1] });
    expect(await metricValue(dispatcher.url, 'tributary_quarantined_total', { topic: topics.deliveries, reason: 'unknown_schema' })).toBe(1);
  });

  it('writes outcomes larger than a transaction in several, and quarantines one larger than the record limit', { timeout: 60_000 }, async () => {
    // 60 failing deliveries of 150 KB: their retry records (9 MB) do not fit one transaction.
    const large = await pipeline.deliverMany(
      Array.from({ length: 60 }, (_, n) => ({ destinationId: 'down', body: { event: `large ${n}`, padding: 'x'.repeat(150_000) } })),
    );
    // One whose retry record would pass KAFKA_MAX_RECORD_BYTES (300 kB).
    const [huge] = await pipeline.deliverMany([{ destinationId: 'down', body: { event: 'huge', padding: 'y'.repeat(400_000) } }]);
    const [later] = await pipeline.deliverMany([{ destinationId: 'ok', body: { event: 'after the large ones' } }]);

    await eventually(() => received(later!.body), 'a delivery after them delivered');
    await eventually(() => large.every((delivery) => pipeline.retriesFor(delivery.deliveryId).length === 1), 'every large retry record written', 40_000);
    const tooLarge = await eventually(() => pipeline.quarantined.find(({ value }) => value.reason === 'too_large'), 'the oversized outcome quarantined');
    expect(tooLarge.value).toMatchObject({ service: 'dispatcher', key: Buffer.from(huge!.deliveryId) });
    expect(tooLarge.value.valueSize).toBeGreaterThan(400_000);
    expect(pipeline.retriesFor(huge!.deliveryId)).toEqual([]);
    // The writer never failed a transaction on the way.
    expect(await metricValue(dispatcher.url, 'tributary_dispatcher_transaction_failures_total')).toBe(0);
  });
});
