/**
 * Proves the stack the tests run against is real: a broker that creates topics, takes
 * produce/consume and transactions, and a registry whose ccompat ids round-trip through
 * @kafkajs/confluent-schema-registry. There is no skip path: if no stack can be had,
 * beforeAll throws and every test here fails.
 */
import { randomUUID } from 'node:crypto';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireStack, type AcquiredStack } from './acquire.js';

const { Kafka, logLevel } = kafkajs;

let acquired: AcquiredStack | undefined;
let acquireError: unknown;

beforeAll(async () => {
  try {
    acquired = await acquireStack();
  } catch (err) {
    // Kept for the tests to rethrow, so each one is reported as failed rather than skipped.
    acquireError = err;
  }
});

afterAll(async () => {
  await acquired?.stop();
}, 60_000);

function theStack(): AcquiredStack {
  if (!acquired) throw acquireError instanceof Error ? acquireError : new Error(`no stack: ${String(acquireError)}`);
  return acquired;
}

const kafkaFor = (s: AcquiredStack): InstanceType<typeof Kafka> =>
  new Kafka({ clientId: `stack-it-${randomUUID().slice(0, 8)}`, brokers: s.brokers, logLevel: logLevel.NOTHING });

async function createTopic(kafka: InstanceType<typeof Kafka>, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3 }] });
  } finally {
    await admin.disconnect();
  }
}

/** Reads from the start of `topic` with a new group (read_committed) until `done` says so. */
async function consume(
  kafka: InstanceType<typeof Kafka>,
  topic: string,
  done: (values: Buffer[]) => boolean,
): Promise<Buffer[]> {
  const consumer = kafka.consumer({ groupId: `stack-it-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const values: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`incomplete after 30 s: ${values.length} messages`)), 30_000);
      consumer
        .run({
          eachMessage: async ({ message }) => {
            if (message.value) values.push(message.value);
            if (done(values)) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    return values;
  } finally {
    await consumer.disconnect();
  }
}

const userSchemaV1 = {
  type: 'record',
  name: 'StackCheck',
  namespace: 'dev.tributary.it',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'count', type: 'int' },
  ],
};

describe('the stack the tests run against', () => {
  it('round-trips an Avro record through the broker and the registry', async () => {
    const stack = theStack();
    const kafka = kafkaFor(stack);
    const topic = `stack-it-${randomUUID()}`;
    await createTopic(kafka, topic);

    const registry = new SchemaRegistry({ host: stack.registryUrl });
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(userSchemaV1) },
      { subject: `${topic}-value` },
    );
    // The id a registration returns must be the id the read path accepts (contentId mode).
    const fetched = await fetch(`${stack.registryUrl}/schemas/ids/${id}`);
    expect(fetched.status).toBe(200);

    const record = { id: randomUUID(), count: 42 };
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ key: record.id, value: await registry.encode(id, record) }] });
    await producer.disconnect();

    const [value] = await consume(kafka, topic, (v) => v.length >= 1);
    expect(value).toBeDefined();
    expect(value?.readInt32BE(1)).toBe(id);
    expect(await registry.decode(value as Buffer)).toEqual(record);
  });

  it('enforces per-subject BACKWARD compatibility with a 409', async () => {
    const stack = theStack();
    const subject = `stack-it-compat-${randomUUID()}-value`;
    const registry = new SchemaRegistry({ host: stack.registryUrl });
    await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(userSchemaV1) }, { subject });
    const put = await fetch(`${stack.registryUrl}/config/${subject}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    });
    expect(put.status).toBe(200);

    // A new required field without a default cannot read old records.
    const incompatible = { ...userSchemaV1, fields: [...userSchemaV1.fields, { name: 'extra', type: 'string' }] };
    const refused = await fetch(`${stack.registryUrl}/subjects/${subject}/versions`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(incompatible) }),
    });
    expect(refused.status).toBe(409);

    const compatible = { ...userSchemaV1, fields: [...userSchemaV1.fields, { name: 'extra', type: 'string', default: '' }] };
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(compatible) }, { subject });
    expect(id).toBeGreaterThan(0);
  });

  it('supports idempotent, transactional consume-transform-produce', async () => {
    const stack = theStack();
    const kafka = kafkaFor(stack);
    const input = `stack-it-tx-in-${randomUUID()}`;
    const output = `stack-it-tx-out-${randomUUID()}`;
    await createTopic(kafka, input);
    await createTopic(kafka, output);

    const plain = kafka.producer();
    await plain.connect();
    await plain.send({ topic: input, messages: [{ key: 'a', value: 'one' }, { key: 'b', value: 'two' }] });
    await plain.disconnect();

    const groupId = `stack-it-tx-${randomUUID()}`;
    const producer = kafka.producer({ idempotent: true, transactionalId: `stack-it-${randomUUID()}`, maxInFlightRequests: 1 });
    await producer.connect();
    const consumer = kafka.consumer({ groupId });
    await consumer.connect();
    await consumer.subscribe({ topic: input, fromBeginning: true });
    let handled = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`handled ${handled}/2 within 30 s`)), 30_000);
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ topic, partition, message }) => {
            const tx = await producer.transaction();
            try {
              await tx.send({ topic: output, messages: [{ key: message.key, value: `${message.value?.toString()}!` }] });
              await tx.sendOffsets({
                consumerGroupId: groupId,
                topics: [{ topic, partitions: [{ partition, offset: (BigInt(message.offset) + 1n).toString() }] }],
              });
              await tx.commit();
            } catch (err) {
              await tx.abort();
              throw err;
            }
            handled += 1;
            if (handled === 2) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await consumer.disconnect();

    // An aborted transaction must stay invisible to read_committed consumers. 'end' follows
    // it in the same partition, so once 'end' is read the aborted record would have been too.
    const aborted = await producer.transaction();
    await aborted.send({ topic: output, messages: [{ value: 'aborted', partition: 0 }] });
    await aborted.abort();
    const last = await producer.transaction();
    await last.send({ topic: output, messages: [{ value: 'end', partition: 0 }] });
    await last.commit();
    await producer.disconnect();

    const seen = (values: Buffer[]): string[] => values.map((v) => v.toString()).sort();
    const values = await consume(kafka, output, (v) => ['end', 'one!', 'two!'].every((x) => seen(v).includes(x)));
    expect(seen(values)).toEqual(['end', 'one!', 'two!']);

    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchOffsets({ groupId, topics: [input] });
    await admin.disconnect();
    // Partitions without a commit report -1.
    const committed = offsets[0]?.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    expect(committed).toBe(2);
  });
});
