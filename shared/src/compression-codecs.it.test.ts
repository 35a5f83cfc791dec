/**
 * LZ4, Snappy and ZSTD record batches on the real broker, read by a consumer made the way the
 * services make theirs (createKafka, createConsumer). Without the codecs kafkajs threw
 * KafkaJSNotImplemented at the first such batch and the consumer never got past it.
 *
 * The broker writes the batches itself where a topic's `compression.type` says so — with the
 * Java client's own codecs, byte for byte what a Java producer sends — which is also how a ZSTD
 * batch is made here (Tributary writes none). LZ4 and Snappy batches are also written by a
 * kafkajs producer with our codecs, to a topic that keeps what producers send: the broker reads
 * each batch it takes (Java's decoders), so a frame it cannot read would fail the send.
 */
import { CompressionCodecs, CompressionTypes, type Kafka } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { readTopicToEnd, testKafka, uniqueName } from '@tributary/test/harness';
import type { KafkajsCodec } from './compression-codecs.js';
import { createProducer, ensureTopics, withAdmin } from './kafka.js';

const codecs = CompressionCodecs as unknown as Record<number, () => KafkajsCodec>;
const restore: Array<() => void> = [];
afterEach(() => {
  for (const undo of restore.splice(0)) undo();
});

/** Counts the batches the registered codec of `type` decompresses (proof they came compressed so). */
function countDecompressions(type: CompressionTypes): { batches: number } {
  const registered = codecs[type]!;
  const counter = { batches: 0 };
  codecs[type] = () => {
    const codec = registered();
    return { compress: (encoder) => codec.compress(encoder), decompress: (buffer) => (counter.batches++, codec.decompress(buffer)) };
  };
  restore.push(() => (codecs[type] = registered));
  return counter;
}

/** Small records and a large, repetitive one: several LZ4 blocks and snappy-java chunks in one batch. */
function records(prefix: string): Array<{ key: string; value: Buffer }> {
  const small = Array.from({ length: 40 }, (_, index) => ({ key: `${prefix}-${index}`, value: Buffer.from(JSON.stringify({ index, event: 'Order Completed', prefix })) }));
  const large = { key: `${prefix}-large`, value: Buffer.from(JSON.stringify({ pad: 'abcdefgh'.repeat(25_000), prefix })) };
  return [...small, large];
}

async function topicWith(kafka: Kafka, compression: string): Promise<string> {
  const topic = uniqueName(`it.compression.${compression}`);
  await withAdmin(kafka, (admin) => ensureTopics(admin, [{ topic, numPartitions: 1, config: { 'compression.type': compression } }]));
  return topic;
}

async function readBack(kafka: Kafka, topic: string): Promise<Array<{ key: string; value: Buffer }>> {
  return (await readTopicToEnd(kafka, topic, { timeoutMs: 30_000 })).map(({ message }) => ({ key: message.key!.toString(), value: message.value! }));
}

describe('compressed record batches on a real broker', () => {
  it.each([
    ['lz4', CompressionTypes.LZ4],
    ['snappy', CompressionTypes.Snappy],
    ['zstd', CompressionTypes.ZSTD],
  ] as const)('a service consumer reads a topic the broker compresses with %s', async (compression, type) => {
    const kafka = testKafka();
    const topic = await topicWith(kafka, compression);
    const producer = createProducer(kafka);
    await producer.connect();
    const sent = records(compression);
    try {
      // Uncompressed from here; the broker stores them compressed as the topic says.
      await producer.send({ topic, messages: sent.slice(0, 20) });
      await producer.send({ topic, messages: sent.slice(20) });
    } finally {
      await producer.disconnect();
    }
    const decompressed = countDecompressions(type);
    expect(await readBack(kafka, topic)).toEqual(sent);
    expect(decompressed.batches).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['LZ4', CompressionTypes.LZ4],
    ['Snappy', CompressionTypes.Snappy],
  ] as const)('a kafkajs producer compressing with %s writes batches the broker takes as they are, and they read back the same', async (_name, type) => {
    const kafka = testKafka();
    const topic = await topicWith(kafka, 'producer');
    const producer = createProducer(kafka);
    await producer.connect();
    const sent = records(String(type));
    try {
      await producer.send({ topic, compression: type, messages: sent });
    } finally {
      await producer.disconnect();
    }
    const decompressed = countDecompressions(type);
    expect(await readBack(kafka, topic)).toEqual(sent);
    expect(decompressed.batches).toBeGreaterThanOrEqual(1);
  });

  it('refuses to write ZSTD, saying so, and writes nothing', async () => {
    const kafka = testKafka();
    const topic = await topicWith(kafka, 'producer');
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      await expect(producer.send({ topic, compression: CompressionTypes.ZSTD, messages: [{ key: 'k', value: 'v' }] })).rejects.toThrow(/ZSTD compression is not supported for writing/);
    } finally {
      await producer.disconnect();
    }
    expect(await readBack(kafka, topic)).toEqual([]);
  });
});
