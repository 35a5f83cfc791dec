/**
 * Kafka limit probe, one side per process (as ingest and the router are separate
 * processes): `produce` sends batches of 100 records of the ingest records' size with the
 * services' own producer settings (shared `createProducer`: idempotent, acks=all) for
 * BENCH_LIMIT_SECONDS, keeping a few sends queued so the producer never waits on us;
 * `consume` reads them with the services' consumer settings (shared `createConsumer`) until
 * told to stop, reporting its count every 200 ms. The orchestrator computes the end-to-end rate: records consumed ÷ (last
 * consumed − first produced).
 */
import { createConsumer, createKafka, createLogger, createProducer } from '@tributary/shared';
import type { KafkaLimitProgress, KafkaLimitReady, KafkaLimitResult } from './protocol.js';

const SENDS_QUEUED = 4;
const RECORDS_PER_SEND = 100;

const role = process.env.BENCH_KAFKA_ROLE;
const brokers = process.env.BENCH_KAFKA_BROKERS?.split(',');
const topic = process.env.BENCH_LIMIT_TOPIC;
const recordBytes = Number(process.env.BENCH_LIMIT_RECORD_BYTES);
const seconds = Number(process.env.BENCH_LIMIT_SECONDS);
if ((role !== 'produce' && role !== 'consume') || !brokers || !topic || !process.send) {
  throw new Error('the Kafka limit probe runs as a forked child with BENCH_KAFKA_ROLE, BENCH_KAFKA_BROKERS and BENCH_LIMIT_TOPIC set');
}
const send = (message: KafkaLimitResult | KafkaLimitReady | KafkaLimitProgress): Promise<void> => new Promise((resolve) => process.send!(message, () => resolve()));

// The orchestrator going away ends the probe too.
process.on('disconnect', () => process.exit(0));

const logger = createLogger({ service: `bench-kafka-${role}`, level: 'warn' });
const kafka = createKafka({ brokers, clientId: `bench-kafka-${role}`, logger });

if (role === 'produce') {
  if (!(recordBytes > 0) || !(seconds > 0)) throw new Error('BENCH_LIMIT_RECORD_BYTES and BENCH_LIMIT_SECONDS must be positive');
  const producer = createProducer(kafka);
  await producer.connect();
  const value = Buffer.alloc(recordBytes, 'x');
  let records = 0;
  let next = 0;
  let firstMs = 0;
  let lastMs = 0;
  const stopAt = Date.now() + seconds * 1000;
  const loop = async (): Promise<void> => {
    while (Date.now() < stopAt) {
      const messages = Array.from({ length: RECORDS_PER_SEND }, () => ({ key: `anon-${next++ % 5000}`, value }));
      if (firstMs === 0) firstMs = Date.now();
      await producer.send({ topic, messages, acks: -1 });
      records += RECORDS_PER_SEND;
      lastMs = Date.now();
    }
  };
  await Promise.all(Array.from({ length: SENDS_QUEUED }, loop));
  await producer.disconnect();
  await send({ kind: 'kafka-limit', role, records, firstMs, lastMs });
  // Stay until the orchestrator has read this process's CPU time and stops it.
  process.on('message', () => process.exit(0));
} else {
  const consumer = createConsumer(kafka, `${topic}-reader`);
  let records = 0;
  let firstMs = 0;
  let lastMs = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => void send({ kind: 'kafka-limit-ready' }));
  setInterval(() => void send({ kind: 'kafka-limit-progress', records }), 200);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const now = Date.now();
      if (firstMs === 0) firstMs = now;
      records += batch.messages.length;
      lastMs = now;
    },
  });
  process.on('message', async () => {
    await consumer.disconnect();
    await send({ kind: 'kafka-limit', role, records, firstMs, lastMs });
    process.exit(0);
  });
}
