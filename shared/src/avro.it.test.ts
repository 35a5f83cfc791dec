import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { loadSchema, type IngestMessage, type RawRecordSchema } from '@tributary/schemas';
import { createTopics, readTopic, stackEndpoints, testCodec, testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { AvroCodec, AvroDecodeError, subjectFor } from './avro.js';
import { createProducer } from './kafka.js';

function sampleMessage(overrides: Partial<IngestMessage> = {}): IngestMessage {
  return {
    messageId: 'm-1',
    type: 'track',
    sourceId: 'web',
    userId: 'u-1',
    anonymousId: null,
    timestamp: Date.parse('2026-11-21T10:00:00.000Z'),
    originalTimestamp: null,
    sentAt: null,
    receivedAt: Date.parse('2026-11-21T10:00:00.123Z'),
    event: 'Signed Up',
    name: null,
    category: null,
    groupId: null,
    previousId: null,
    properties: JSON.stringify({ plan: 'pro', 'ünïcode': '✓' }),
    traits: null,
    context: '{}',
    integrations: null,
    ...overrides,
  };
}

describe('Avro through the real registry and broker', () => {
  let kafka: Kafka;
  let producer: Producer;

  beforeAll(async () => {
    kafka = testKafka();
    producer = createProducer(kafka);
    await producer.connect();
  });
  afterAll(async () => {
    await producer.disconnect();
  });

  it('produces and consumes an ingest record encoded with the registered schema', async () => {
    const topic = uniqueName('it.avro.ingest');
    await createTopics(kafka, [topic]);
    const codec = testCodec();
    const id = await codec.register(topic, 'ingest');
    expect(id).toBeGreaterThan(0);
    // Registering the same schema again is a no-op that returns the same id.
    expect(await codec.register(topic, 'ingest')).toBe(id);

    const value = sampleMessage();
    await producer.send({ topic, acks: -1, messages: [{ key: 'u-1', value: codec.encode(topic, value) }] });
    const [record] = await readTopic(kafka, topic, { until: (records) => records.length >= 1 });
    expect(record!.message.value!.readUInt32BE(1)).toBe(id);

    // A different process (fresh codec, empty caches) reads it through the registry.
    const reader = testCodec();
    expect(await reader.decode<IngestMessage>('ingest', record!.message.value!)).toEqual(value);
  });

  it('refuses to encode a value that does not match, naming the field', async () => {
    const codec = testCodec();
    const topic = uniqueName('it.avro.invalid');
    await codec.register(topic, 'ingest');
    expect(() => codec.encode(topic, { ...sampleMessage(), timestamp: 'yesterday' })).toThrow(/timestamp/);
  });

  it('the registry accepts a BACKWARD-compatible evolution and refuses an incompatible one', async () => {
    const topic = uniqueName('it.avro.evolution');
    const codec = testCodec();
    const v1 = loadSchema('ingest');
    const v1Id = await codec.registerSchema(topic, v1);

    const compatible: RawRecordSchema = {
      ...v1,
      fields: [...v1.fields, { name: 'channel', type: ['null', 'string'], default: null }],
    };
    const v2Id = await codec.registerSchema(topic, compatible);
    expect(v2Id).not.toBe(v1Id);

    // A new required field without a default cannot read old records: not BACKWARD.
    const incompatible: RawRecordSchema = {
      ...compatible,
      fields: [...compatible.fields, { name: 'tenant', type: 'string' }],
    };
    await expect(codec.registerSchema(topic, incompatible)).rejects.toThrow(/409|incompatible|compatib/i);

    const registryUrl = codec.registryUrl;
    const config = await fetch(`${registryUrl}/config/${subjectFor(topic)}`).then((r) => r.json() as Promise<{ compatibilityLevel: string }>);
    expect(config.compatibilityLevel).toBe('BACKWARD');
    const versions = await fetch(`${registryUrl}/subjects/${subjectFor(topic)}/versions`).then((r) => r.json() as Promise<number[]>);
    expect(versions).toHaveLength(2);
  });

  it('decodes records written with an older schema into the current shape', async () => {
    const topic = uniqueName('it.avro.resolve');
    await createTopics(kafka, [topic]);
    const writer = testCodec();
    const current = loadSchema('ingest');
    // An older producer whose schema lacked `integrations`.
    const older: RawRecordSchema = { ...current, fields: current.fields.filter((field) => field.name !== 'integrations') };
    const olderId = await writer.registerSchema(topic, older);
    const olderType = avro.Type.forSchema(older as unknown as avro.Schema);
    const { integrations: _dropped, ...oldValue } = sampleMessage();
    const header = Buffer.alloc(5);
    header.writeUInt32BE(olderId, 1);
    await producer.send({ topic, acks: -1, messages: [{ value: Buffer.concat([header, olderType.toBuffer(oldValue)]) }] });
    const [record] = await readTopic(kafka, topic, { until: (records) => records.length >= 1 });
    const decoded = await testCodec().decode<IngestMessage>('ingest', record!.message.value!);
    expect(decoded).toEqual({ ...oldValue, integrations: null });
  });

  it('says why a value can never be decoded: not framed, unknown schema id, truncated', async () => {
    const topic = uniqueName('it.avro.poison');
    await createTopics(kafka, [topic]);
    // This module's own class, so that `instanceof AvroDecodeError` holds.
    const codec = new AvroCodec({ registryUrl: stackEndpoints().registryUrl, logger: testLogger('avro') });
    await codec.register(topic, 'ingest');
    const good = codec.encode(topic, sampleMessage());
    const unknownId = Buffer.from(good);
    unknownId.writeUInt32BE(2_000_000_000, 1);
    const reasons = async (value: Buffer | null) =>
      codec.decode('ingest', value).then(
        () => 'decoded',
        (error: unknown) => (error instanceof AvroDecodeError ? error.reason : `transient: ${String(error)}`),
      );
    expect(await reasons(Buffer.from('{"json":true}'))).toBe('not_framed');
    expect(await reasons(null)).toBe('not_framed');
    expect(await reasons(unknownId)).toBe('unknown_schema');
    expect(await reasons(good.subarray(0, good.length - 10))).toBe('undecodable');
    expect(await reasons(good)).toBe('decoded');
  });
});
