/**
 * The quarantine route of the real ingest process against the real broker and registry:
 * records written to the namespace's quarantine topic, as the services write them, are
 * listed newest first with their filters, the original bytes only on request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Producer } from 'kafkajs';
import { topicNames, type TopicNames } from '@tributary/schemas';
import { createProducer, quarantineMessage, type AvroCodec } from '@tributary/shared';
import { adminClient, stackEnv, startService, testCodec, testKafka, uniqueNamespace, type RunningService } from '@tributary/test/harness';

const TOKEN = 'quarantine-admin-token';

let topics: TopicNames;
let codec: AvroCodec;
let producer: Producer;
let ingest: RunningService;

beforeAll(async () => {
  const namespace = uniqueNamespace('admin-quar');
  topics = topicNames(namespace);
  codec = testCodec();
  ingest = await startService('ingest', { env: { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN } });
  await codec.register(topics.quarantine, 'quarantine');
  producer = createProducer(testKafka());
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  await ingest?.stop();
});

const admin = adminClient(() => ingest.url, TOKEN);

describe('GET /admin/v1/quarantine', () => {
  it('lists what the services set aside, newest first, filtered, bytes only on request', async () => {
    const now = Date.now();
    const poison = (topic: string, offset: number) => ({ topic, partition: 0, offset: String(offset), key: Buffer.from(`key-${offset}`), value: Buffer.from('{"not":"avro"}'), timestamp: String(now) });
    const records = [
      quarantineMessage(codec, topics, 'router', poison(topics.ingest, 1), { reason: 'not_framed', error: 'no magic byte' }, now - 3_000),
      quarantineMessage(codec, topics, 'router', poison(topics.ingest, 2), { reason: 'too_deep', error: 'properties nests more than 64 levels deep' }, now - 2_000),
      quarantineMessage(codec, topics, 'dispatcher', poison(topics.deliveries, 3), { reason: 'unknown_schema', error: 'schema id 9 is not in the registry' }, now - 1_000),
    ];
    await producer.send({ topic: topics.quarantine, messages: records.map(({ message }) => message) });

    const all = await admin<{ order: string; matched: number; records: Array<Record<string, unknown>> }>('GET', '/quarantine');
    expect(all.matched).toBe(3);
    expect(all.records.map((record) => record.reason)).toEqual(['unknown_schema', 'too_deep', 'not_framed']);
    expect(all.records[1]).toMatchObject({ service: 'router', sourceTopic: topics.ingest, sourceOffset: 2, key: 'key-2', valueSize: 14, error: 'properties nests more than 64 levels deep' });
    expect(all.records[1]).not.toHaveProperty('value');

    const routerOnly = await admin<{ matched: number; records: Array<Record<string, unknown>> }>('GET', `/quarantine?service=router&limit=1&value=true`);
    expect(routerOnly.matched).toBe(2);
    expect(routerOnly.records).toHaveLength(1);
    expect(Buffer.from(String(routerOnly.records[0]!.value), 'base64').toString()).toBe('{"not":"avro"}');
    await expect(admin('GET', '/quarantine?service=ingest')).rejects.toThrow(/400.*service/);
  });
});
