/**
 * DeadLetterStore against the real broker and registry: listing reads from `since` (found
 * by timestamp) to the end and filters; a replay writes each dead letter's delivery once
 * with a fresh window, however often it is run — also when two replays run at once, when one
 * is stopped part-way between its slices, and where a marker names another dead letter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Producer, Transaction } from 'kafkajs';
import { topicNames, type DeadLetter, type DeadLetterReplay, type Delivery } from '@tributary/schemas';
import { keysRead, readTopicToEnd, stackEndpoints, stackEnv, testDelivery, testKafka, testLogger, uniqueNamespace } from '@tributary/test/harness';
import { AvroCodec } from './avro.js';
import { DeadLetterStore, ReplayInterrupted } from './dead-letters.js';
import { createProducer } from './kafka.js';
import { prepareTopics, topicDefinitions } from './topology.js';

const topics = topicNames(uniqueNamespace('dlq'));
const kafka = testKafka('dead-letters-test');
// Built from this package's source (not the harness's testCodec, which is the built one) to pass to DeadLetterStore.
const codec = new AvroCodec({ registryUrl: stackEndpoints().registryUrl, logger: testLogger('avro') });
const store = new DeadLetterStore({ kafka, codec, topics, logger: testLogger() });
let producer: Producer;

beforeAll(async () => {
  await prepareTopics({ kafka, codec, logger: testLogger(), definitions: topicDefinitions(topics), numPartitions: Number(stackEnv().KAFKA_TOPIC_PARTITIONS) });
  producer = createProducer(kafka);
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
});

function deadLetter(destinationId: string, messageId: string, reason: string, deadAt: number): DeadLetter {
  const delivery = testDelivery(destinationId, messageId, {
    body: Buffer.from(`{"messageId":"${messageId}"}`),
    receivedAt: deadAt - 60_000,
    routedAt: deadAt - 59_000,
    attempts: 5,
    firstAttemptAt: deadAt - 50_000,
    lastError: 'HTTP 503',
    lastStatus: 503,
    replays: 1,
  });
  return { delivery, reason, status: 503, error: 'HTTP 503 from webhooks[0] http://127.0.0.1:1', deadAt };
}

async function write(letters: DeadLetter[], timestamp?: number): Promise<void> {
  // In sends of 500: one send of thousands could pass the broker's request size.
  for (let start = 0; start < letters.length; start += 500) {
    await producer.send({
      topic: topics.deadLetters,
      messages: letters.slice(start, start + 500).map((letter) => ({
        key: letter.delivery.deliveryId,
        value: codec.encode(topics.deadLetters, letter),
        ...(timestamp === undefined ? {} : { timestamp: String(timestamp) }),
      })),
    });
  }
}

/** A store replaying in slices of `records` dead letters. */
const slicedStore = (records: number) => new DeadLetterStore({ kafka, codec, topics, logger: testLogger(), replaySlice: { records, bytes: 4 * 1024 * 1024 } });

/**
 * The deliveries replays wrote. With `keys`, the read goes on until those are there: a replay
 * returns once its last slice is committed, and the broker writes the commit markers after
 * that, so a read made at once may end before them.
 */
async function replayedDeliveries(keys?: string[]): Promise<Delivery[]> {
  const records = await readTopicToEnd(kafka, topics.dueRetries, keys ? { until: keysRead(keys) } : {});
  return Promise.all(records.map(({ message }) => codec.decode<Delivery>('delivery', message.value!)));
}

describe('DeadLetterStore', () => {
  const now = Date.now();

  it('lists newest first with filters, counting matches beyond the limit, from `since` on', async () => {
    // Written "yesterday": a since of one hour ago starts the read after them.
    await write([deadLetter('alpha', 'old-1', 'expired', now - 86_400_000)], now - 86_400_000);
    await write([
      deadLetter('alpha', 'a-1', 'expired', now - 3_000),
      deadLetter('alpha', 'a-2', 'http_status', now - 2_000),
      deadLetter('beta', 'b-1', 'expired', now - 1_000),
      deadLetter('alpha', 'a-3', 'expired', now - 500),
    ]);

    const all = await store.list({}, 10);
    expect(all.matched).toBe(5);
    expect(all.deadLetters.map(({ letter }) => letter.delivery.messageId)).toEqual(['a-3', 'b-1', 'a-2', 'a-1', 'old-1']);
    expect(all.deadLetters.every(({ replayedAt }) => replayedAt === undefined)).toBe(true);

    const alphaExpired = await store.list({ destinationId: 'alpha', reason: 'expired', since: now - 3_600_000 }, 1);
    expect(alphaExpired.matched).toBe(2);
    expect(alphaExpired.deadLetters.map(({ letter }) => letter.delivery.messageId)).toEqual(['a-3']);
  });

  it('replays with a fresh window once, and skips what was replayed when run again', async () => {
    const dry = await store.replay({ destinationId: 'alpha', reason: 'expired' }, { dryRun: true });
    expect(dry).toEqual({ matched: 3, replayed: 3, skipped: 0, dryRun: true });
    expect(await replayedDeliveries()).toEqual([]);

    expect(await store.replay({ destinationId: 'alpha', reason: 'expired' })).toEqual({ matched: 3, replayed: 3, skipped: 0, dryRun: false });
    expect(await store.replay({ destinationId: 'alpha' })).toEqual({ matched: 4, replayed: 1, skipped: 3, dryRun: false });
    expect(await store.replay({ destinationId: 'alpha' })).toEqual({ matched: 4, replayed: 0, skipped: 4, dryRun: false });

    const deliveries = await replayedDeliveries();
    expect(deliveries.map((delivery) => delivery.messageId).sort()).toEqual(['a-1', 'a-2', 'a-3', 'old-1']);
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ attempts: 0, firstAttemptAt: null, lastError: null, lastStatus: null, replays: 2 });
    }
    const listed = await store.list({ destinationId: 'alpha' }, 10);
    // All four of alpha's dead letters are listed (an empty listing would pass the `every`).
    expect(listed.deadLetters.map(({ letter }) => letter.delivery.messageId).sort()).toEqual(['a-1', 'a-2', 'a-3', 'old-1']);
    expect(listed.deadLetters.every(({ replayedAt }) => replayedAt !== undefined && replayedAt >= now)).toBe(true);
  });

  it('sends each dead letter once when two replays run at the same time', async () => {
    const letters = Array.from({ length: 200 }, (_, index) => deadLetter('gamma', `g-${index}`, 'expired', Date.now()));
    await write(letters);
    // Slices of 20: a replay may be stopped after some of its slices went out.
    const outcomes = await Promise.allSettled([slicedStore(20).replay({ destinationId: 'gamma' }), slicedStore(20).replay({ destinationId: 'gamma' })]);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ name: 'ReplayInterrupted', byAnotherReplay: true });
    }
    // An interrupted replay's count is what its committed slices sent: the sum is exact.
    const replayed = outcomes.reduce((sum, outcome) => sum + (outcome.status === 'fulfilled' ? outcome.value.replayed : (outcome.reason as ReplayInterrupted).replayed), 0);
    // Whatever the interleaving, after one more run everything has gone out exactly once.
    const after = await store.replay({ destinationId: 'gamma' });
    expect(replayed + after.replayed).toBe(200);
    const gamma = (await replayedDeliveries(letters.map(({ delivery }) => delivery.deliveryId))).filter((delivery) => delivery.destinationId === 'gamma');
    expect(gamma.length).toBe(200);
    expect(new Set(gamma.map((delivery) => delivery.messageId)).size).toBe(200);
    console.info(
      `[dead-letters] concurrent replays: ${outcomes.map((outcome) => (outcome.status === 'fulfilled' ? `replayed ${outcome.value.replayed}` : `interrupted after ${(outcome.reason as ReplayInterrupted).replayed}`)).join(', ')}`,
    );
  });

  it('stopped part-way by another replay, says how many went out, and a re-run sends exactly the rest', async () => {
    const total = 2_000;
    const letters = Array.from({ length: total }, (_, index) => deadLetter('delta', `d-${index}`, 'expired', Date.now()));
    await write(letters);
    // Registering the replay id, as another replay does, once this one has read enough to have
    // committed slices (everything on the topic before delta's dead letters is under 300).
    const other = createProducer(kafka, { transactionalId: `${topics.namespace}-dlq-replay` });
    await other.connect();
    let reads = 0;
    let registered: Promise<Transaction> | undefined;
    // The replay waits there until the other has registered: its next slice is then fenced,
    // however fast the host (a replay left to run on could finish first).
    const onProgress = async () => {
      if (++reads === 700) await (registered = other.transaction());
    };
    const stopped = await slicedStore(100)
      .replay({ destinationId: 'delta' }, { onProgress })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(registered).toBeDefined();
    await (await registered!).abort();
    await other.disconnect();

    expect(stopped).toBeInstanceOf(ReplayInterrupted);
    const { replayed, byAnotherReplay, message } = stopped as ReplayInterrupted;
    expect(byAnotherReplay).toBe(true);
    expect(replayed % 100).toBe(0);
    expect(replayed).toBeGreaterThanOrEqual(400);
    expect(replayed).toBeLessThan(total);
    expect(message).toBe(`another replay started and stopped this one after replaying ${replayed} dead letters; running it again skips every dead letter already replayed`);
    const delta = (keys?: string[]) => replayedDeliveries(keys).then((deliveries) => deliveries.filter((delivery) => delivery.destinationId === 'delta'));
    // No wait needed: the other producer registered the replay id, and so had the broker finish
    // the interrupted replay's last committed slice, markers and all.
    expect((await delta()).length).toBe(replayed);

    expect(await slicedStore(100).replay({ destinationId: 'delta' })).toEqual({ matched: total, replayed: total - replayed, skipped: replayed, dryRun: false });
    const all = await delta(letters.map(({ delivery }) => delivery.deliveryId));
    expect([all.length, new Set(all.map((delivery) => delivery.messageId)).size]).toEqual([total, total]);
    console.info(`[dead-letters] interrupted after ${replayed} of ${total}; the re-run sent the other ${total - replayed}`);
  });

  it('replays a dead letter whose place holds the marker of another (a recreated dead-letter topic)', async () => {
    await write([deadLetter('epsilon', 'e-new', 'expired', Date.now())]);
    const [listed] = (await store.list({ destinationId: 'epsilon' }, 1)).deadLetters;
    // What a replay before the topic was deleted and created again left at this place.
    const stale: DeadLetterReplay = { deliveryId: 'epsilon/web/e-old', destinationId: 'epsilon', replayedAt: now - 86_400_000 };
    await producer.send({ topic: topics.deadLetterReplays, messages: [{ key: `${listed!.partition}/${listed!.offset}`, value: codec.encode(topics.deadLetterReplays, stale) }] });

    expect((await store.list({ destinationId: 'epsilon' }, 1)).deadLetters[0]!.replayedAt).toBeUndefined();
    expect(await store.replay({ destinationId: 'epsilon' }, { dryRun: true })).toEqual({ matched: 1, replayed: 1, skipped: 0, dryRun: true });
    expect(await store.replay({ destinationId: 'epsilon' })).toEqual({ matched: 1, replayed: 1, skipped: 0, dryRun: false });
    // Once the delivery is read, its transaction's markers are written, the replay marker's too
    // (one broker writes a transaction's markers for all its partitions together).
    expect((await replayedDeliveries([listed!.letter.delivery.deliveryId])).filter((delivery) => delivery.destinationId === 'epsilon').map((delivery) => delivery.messageId)).toEqual(['e-new']);
    expect((await store.list({ destinationId: 'epsilon' }, 1)).deadLetters[0]!.replayedAt).toBeGreaterThanOrEqual(now);
  });
});
