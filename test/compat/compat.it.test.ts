/**
 * Real-client compatibility: the real Segment client libraries — analytics-go v2.1.1,
 * @segment/analytics-node, analytics-node 6, segment-analytics-python, analytics-java
 * 3.5.4 and analytics.js (@segment/analytics-next, in Chromium) — send their
 * calls to a running ingest, and every message must arrive on the ingest topic exactly
 * once, with its fields and normalised timestamps (`checkDelivery` says what that
 * means). Each client gets its own namespace, source and ingest process.
 *
 * The Go, Python and Java (JDK 17 + Maven) toolchains and Chromium are required: without one
 * its case fails saying what to install. The toolchains' first run downloads modules /
 * packages and builds into a cache outside the repository; the test log shows how long that
 * took.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { topicNames, type ConfigEntry, type IngestMessage, type Source, type TopicNames } from '@tributary/schemas';
import { configKey, createProducer, prepareTopics, topicDefinitions, type AvroCodec } from '@tributary/shared';
import type { Kafka } from 'kafkajs';
import {
  readTopicToEnd,
  startService,
  stackEnv,
  testCodec,
  testKafka,
  testLogger,
  uniqueNamespace,
  type RunningService,
} from '@tributary/test/harness';
import { runAnalyticsJs } from './browser/analytics-js.js';
import { checkDelivery, describeTraffic, type ArrivedRecord } from './delivery-check.js';
import type { CallType, Manifest } from './manifest.js';
import { runAnalyticsNode6 } from './node/analytics-node-6.js';
import { runSegmentAnalyticsNode, type DriverOptions } from './node/segment-analytics-node.js';
import { buildGoDriver, prepareJavaDriver, preparePythonVenv, PYTHON_DRIVER, runDriverProgram, type Prepared } from './toolchains.js';

type Driver = (options: DriverOptions) => Promise<Manifest>;

interface ClientCase {
  name: string;
  /** The calls the driver makes, in order. */
  calls: CallType[];
  /** Gets the toolchain ready (cached after the first run) and returns the driver. */
  prepare(): Promise<Driver>;
  /** A page in a browser: its manifest must list every URL the page requested (`requestedUrls`). */
  browser?: true;
}

const SIX_CALLS: CallType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias'];

function logPreparation(what: string, prepared: Prepared): void {
  const seconds = (prepared.ms / 1000).toFixed(1);
  console.info(`[compat] ${what}: ${prepared.cached ? `reused from the cache in ${seconds} s` : `prepared in ${seconds} s (cold)`} — ${prepared.path}`);
}

const CLIENTS: ClientCase[] = [
  {
    name: 'analytics-go v2.1.1',
    // v2 has no Screen; after the five calls, the identity switch of its spec.
    calls: ['identify', 'track', 'page', 'group', 'alias', 'track', 'alias', 'identify', 'track'],
    async prepare() {
      const prepared = await buildGoDriver();
      logPreparation('Go driver build', prepared);
      // Outside UTC, v2 stamps its messages with an offset such as +0530.
      return (options) => runDriverProgram('the Go driver', prepared.path, [], { ...options, env: { TZ: 'Asia/Kolkata' } });
    },
  },
  {
    name: '@segment/analytics-node',
    calls: SIX_CALLS,
    prepare: async () => runSegmentAnalyticsNode,
  },
  {
    name: 'analytics-node 6',
    calls: SIX_CALLS,
    prepare: async () => runAnalyticsNode6,
  },
  {
    name: 'segment-analytics-python',
    // The last track goes through a client with gzip=True.
    calls: [...SIX_CALLS, 'track'],
    async prepare() {
      const prepared = await preparePythonVenv();
      logPreparation('Python venv', prepared);
      return (options) => runDriverProgram('the Python driver', prepared.path, [PYTHON_DRIVER], options);
    },
  },
  {
    name: 'analytics-java 3.5.4',
    // Its own batching: three messages per request to /v1/import/ (with the trailing slash).
    calls: SIX_CALLS,
    async prepare() {
      const prepared = await prepareJavaDriver();
      logPreparation('Java driver build', prepared);
      return (options) => runDriverProgram('the Java driver', prepared.path, prepared.args, options);
    },
  },
  {
    name: 'analytics.js in Chromium, one request per call',
    // Each call alone to /v1/i, /v1/t, /v1/p, /v1/s, /v1/g, /v1/a, as text/plain.
    calls: SIX_CALLS,
    browser: true,
    prepare: async () => (options) => runAnalyticsJs(options, 'per-call'),
  },
  {
    name: 'analytics.js in Chromium, batching',
    // Its batching strategy: three messages per request to /v1/b.
    calls: SIX_CALLS,
    browser: true,
    prepare: async () => (options) => runAnalyticsJs(options, 'batching'),
  },
];

function isLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  // data: is the page's own empty favicon, never a request on the network.
  return protocol === 'data:' || ['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
}

interface Stack {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  source: Source;
  ingest: RunningService;
}

/**
 * A namespace of its own with a source in its config topic, then ingest: the source is
 * written before ingest starts, and ingest is ready only once it has read the config
 * topic to its end, so the write key is known from the first request.
 */
async function startIngestWithSource(): Promise<Stack> {
  const topics = topicNames(uniqueNamespace('compat'));
  const kafka = testKafka();
  const codec = testCodec();
  await prepareTopics({ kafka, codec, logger: testLogger('compat'), definitions: topicDefinitions(topics), numPartitions: 2 });
  const source: Source = { id: 'compat', name: 'Compatibility suite', writeKey: `wk_compat_${randomBytes(12).toString('hex')}`, enabled: true };
  const entry: ConfigEntry = { entity: source, updatedAt: Date.now() };
  const producer = createProducer(kafka);
  await producer.connect();
  try {
    await producer.send({ topic: topics.config, acks: -1, messages: [{ key: configKey('source', source.id), value: codec.encode(topics.config, entry) }] });
  } finally {
    await producer.disconnect();
  }
  const ingest = await startService('ingest', { env: stackEnv(topics.namespace) });
  return { kafka, codec, topics, source, ingest };
}

/**
 * Everything on the ingest topic once the driver is done. Ingest answers only after Kafka
 * acknowledged, so the topic's end offsets now cover every record the run produced;
 * reading up to them (not up to the expected count) is what lets a duplicate show.
 */
async function readIngestTopic({ kafka, codec, topics }: Stack): Promise<ArrivedRecord[]> {
  // Both lanes: a source past INGEST_SOURCE_RATE is written to the overflow topic.
  const consumed = (await Promise.all([topics.ingest, topics.ingestOverflow].map((topic) => readTopicToEnd(kafka, topic, { timeoutMs: 30_000 })))).flat();
  return Promise.all(
    consumed.map(async ({ partition, message }) => {
      if (!message.value) throw new Error(`ingest record at ${partition}/${message.offset} has no value`);
      return {
        key: message.key ? message.key.toString('utf8') : null,
        partition,
        offset: message.offset,
        value: await codec.decode<IngestMessage>('ingest', message.value),
      };
    }),
  );
}

describe('real Segment client libraries against ingest', () => {
  let ingest: RunningService | undefined;

  afterEach(async () => {
    await ingest?.stop();
    ingest = undefined;
  });

  for (const client of CLIENTS) {
    it(`${client.name}: every call arrives exactly once, with its fields and normalised timestamps`, async () => {
      const drive = await client.prepare();
      const stack = await startIngestWithSource();
      ingest = stack.ingest;

      const startedAt = Date.now();
      const manifest = await drive({ endpoint: stack.ingest.url, writeKey: stack.source.writeKey, runId: stack.topics.namespace });
      const finishedAt = Date.now();
      console.info(describeTraffic(manifest));

      expect(manifest.calls.map((call) => call.type)).toEqual(client.calls);
      if (client.browser) {
        // A browser page: nothing from the internet, and the write key in no URL (a settings
        // fetch from a CDN would put it there). Keyed on the case, not on the field, so that a
        // manifest without the list fails rather than skipping the checks.
        expect(manifest.requestedUrls, 'the URLs the page requested, in the manifest').toBeDefined();
        const requestedUrls = manifest.requestedUrls ?? [];
        expect(requestedUrls.length).toBeGreaterThan(0);
        expect(requestedUrls.filter((url) => !isLoopback(url))).toEqual([]);
        expect(requestedUrls.filter((url) => url.includes(stack.source.writeKey)).map((url) => url.replaceAll(stack.source.writeKey, '<write key>'))).toEqual([]);
      }
      const records = await readIngestTopic(stack);
      expect(checkDelivery(manifest, records, { sourceId: stack.source.id, startedAt, finishedAt })).toEqual([]);
    }, 600_000);
  }
});
