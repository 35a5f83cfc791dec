import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs, { type Producer } from 'kafkajs';
import { topicNames, type DedupBatch } from '@tributary/schemas';
import { createLogger, createProducer, prepareTopics, topicDefinitions, withAdmin } from '@tributary/shared';
import { eventually, testCodec, testKafka, testLogger, uniqueName, uniqueNamespace } from '@tributary/test/harness';
import { DedupStore } from './dedup-store.js';

// kafkajs is CommonJS and Node cannot see this enum as a named export.
const { ConfigResourceTypes, ConfigSource } = kafkajs;
const HOUR = 3_600_000;
const namespace = uniqueNamespace('dedup');
const topics = topicNames(namespace);
const kafka = testKafka();
const codec = testCodec();
let producer: Producer;

beforeAll(async () => {
  // Created by "another service" with a one-hour retention, shorter than the window below.
  await prepareTopics({ kafka, codec, logger: testLogger(), definitions: topicDefinitions(topics, { dedupWindowMs: HOUR }), numPartitions: 2 });
  producer = createProducer(kafka, { transactionalId: uniqueName('dedup-writer') });
  await producer.connect();
});
afterAll(async () => {
  await producer.disconnect();
});

/** The topic's committed end: the sum over partitions of the offsets a read_committed reader may reach. */
const committedEnd = () => withAdmin(kafka, async (admin) => (await admin.fetchTopicOffsets(topics.dedup)).reduce((sum, { high }) => sum + Number(high), 0));

/** One dedup record per distinct time, as a routing transaction writes them. */
async function write(entries: Array<[string, number]>, outcome: 'commit' | 'abort'): Promise<void> {
  const byTime = new Map<number, string[]>();
  for (const [key, firstSeenAt] of entries) byTime.set(firstSeenAt, [...(byTime.get(firstSeenAt) ?? []), key]);
  const transaction = await producer.transaction();
  await transaction.send({
    topic: topics.dedup,
    messages: [...byTime].map(([firstSeenAt, keys]) => ({ key: 'router-test', value: codec.encode(topics.dedup, { firstSeenAt, keys } satisfies DedupBatch) })),
  });
  await (outcome === 'commit' ? transaction.commit() : transaction.abort());
}

describe('DedupStore on the real dedup topic', () => {
  it('loads committed entries inside the window, follows other instances after invalidate(), and raises a retention shorter than the window', async () => {
    const now = Date.now();
    await write([['web/a', now], ['web/old', now - 25 * HOUR]], 'commit');
    await write([['web/aborted', now]], 'abort');

    const lines: string[] = [];
    const logger = createLogger({ service: 'router', level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const store = new DedupStore({ kafka, codec, logger, topic: topics.dedup, groupPrefix: namespace, windowMs: 24 * HOUR, maxEntries: 100, maxBytes: 1e9 });
    await store.start();
    try {
      expect(store.state.isDuplicate('web/a', Date.now())).toBe(true);
      expect(store.state.isDuplicate('web/aborted', Date.now())).toBe(false);
      expect(store.state.isDuplicate('web/old', Date.now())).toBe(false);
      expect(store.state.size).toBe(1);
      expect(lines.join('')).toMatch(/"retentionMs":3600000,"windowMs":86400000.*raised the dedup topic's retention to DEDUP_WINDOW/);
      // Raised, with the topic's own settings kept (AlterConfigs resets what it is not sent).
      const described = await withAdmin(kafka, (admin) =>
        admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topics.dedup }] }),
      );
      const config = Object.fromEntries(described.resources[0]!.configEntries.map((entry) => [entry.configName, entry]));
      expect(config['retention.ms']).toMatchObject({ configValue: String(24 * HOUR), configSource: ConfigSource.TOPIC_CONFIG });
      expect(config['cleanup.policy']).toMatchObject({ configValue: 'delete', configSource: ConfigSource.TOPIC_CONFIG });

      // What another instance commits is known once ready() resolves after invalidate(). The
      // broker writes the commit marker after EndTxn has answered, and a transaction that still
      // looks open is rightly not waited for: the check is made once the commit is visible (a
      // record and its marker past the end before it).
      const before = await committedEnd();
      await write([['web/b', Date.now()]], 'commit');
      await eventually(async () => (await committedEnd()) >= before + 2, 'the commit visible at the end of the dedup topic', 10_000);
      store.invalidate();
      await store.ready();
      expect(store.state.isDuplicate('web/b', Date.now())).toBe(true);

      const claims = store.claims();
      expect(claims.claim('web/b')).toBe(false);
      expect(claims.claim('web/new')).toBe(true);
    } finally {
      await store.stop();
    }
  });
});
