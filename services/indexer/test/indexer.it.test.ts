/**
 * The indexer as deployed — a child process on the real broker, registry and database —
 * behind the real router, dispatcher and retry-scheduler, with a real webhook receiver that
 * fails once and then succeeds: the message, its routing and both attempts are found through
 * the read API. Then the failure cases: a poison record on the attempts topic is quarantined
 * and the record after it still indexed; the database stopped and started again, and the
 * indexer, unready meanwhile, catches up without exiting. Last, the embedded PGlite variant,
 * across a restart on the same data directory.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayPostgres, type ThrowawayPostgres } from '@tributary/deploy/postgres';
import { topicNames, type ConfigEntry, type DeliveryAttempt, type Destination, type IngestMessage, type QuarantinedRecord, type Source, type TopicNames } from '@tributary/schemas';
import { configKey, createProducer, prepareTopics, topicDefinitions, type AvroCodec } from '@tributary/shared';
import { eventually, metricValue, readTopic, stackEnv, startService, testCodec, testKafka, testLogger, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { testAttempt, testMessage } from '../src/test-records.js';

const TOKEN = 'indexer-it-admin-token';
const LADDER = { RETRY_LADDER: '300ms,600ms', RETRY_WINDOW: '1m' };

/** Answers each message's first request 503, later ones 200. */
class FlakyReceiver {
  readonly requests: Array<{ messageId: string; status: number }> = [];
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string };
        const status = this.requests.some((seen) => seen.messageId === messageId) ? 200 : 503;
        this.requests.push({ messageId, status });
        response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'thanks' : 'busy, try later');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

interface Topics {
  producer: Producer;
  codec: AvroCodec;
  topics: TopicNames;
}

async function openTopics(namespace: string): Promise<Topics> {
  const kafka = testKafka(`indexer-test-${namespace}`);
  const codec = testCodec();
  const topics = topicNames(namespace);
  await prepareTopics({ kafka, codec, logger: testLogger(), definitions: topicDefinitions(topics), numPartitions: Number(stackEnv().KAFKA_TOPIC_PARTITIONS) });
  const producer = createProducer(kafka);
  await producer.connect();
  return { producer, codec, topics };
}

async function writeConfig({ producer, codec, topics }: Topics, entity: Source | Destination): Promise<void> {
  const entry: ConfigEntry = { entity, updatedAt: Date.now() };
  await producer.send({ topic: topics.config, messages: [{ key: configKey('settings' in entity ? 'destination' : 'source', entity.id), value: codec.encode(topics.config, entry) }] });
}

const webhooks = (id: string, url: string, enabled = true): Destination => ({
  id,
  name: id,
  type: 'webhooks',
  sources: ['web'],
  enabled,
  settings: { sharedSecret: 'it-secret', standardWebhooksSecret: null, webhooks: [{ url, headers: {} }] },
});

async function produceMessage({ producer, codec, topics }: Topics, message: IngestMessage): Promise<void> {
  await producer.send({ topic: topics.ingest, messages: [{ key: message.anonymousId ?? message.userId, value: codec.encode(topics.ingest, message) }] });
}

async function produceAttempt({ producer, codec, topics }: Topics, attempt: DeliveryAttempt): Promise<void> {
  await producer.send({ topic: topics.attempts, messages: [{ key: attempt.deliveryId, value: codec.encode(topics.attempts, attempt) }] });
}

async function api<T = Record<string, unknown>>(indexer: RunningService, path: string, token: string | null = TOKEN): Promise<{ status: number; body: T }> {
  const response = await fetch(`${indexer.url}/admin/v1${path}`, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as T };
}

interface MessageAnswer {
  messages: Array<{ sourceId: string; message: Record<string, unknown> }>;
  routing: Array<Record<string, unknown>>;
  deliveries: Array<Record<string, unknown>>;
  attempts: Array<Record<string, unknown>>;
}

describe('the indexer behind the real pipeline, on PostgreSQL', () => {
  const namespace = uniqueNamespace('indexer');
  const env = { ...stackEnv(namespace), ...LADDER };
  const receiver = new FlakyReceiver();
  let postgres: ThrowawayPostgres;
  let topics: Topics;
  const services: RunningService[] = [];
  let indexer: RunningService;

  beforeAll(async () => {
    postgres = await startThrowawayPostgres();
    await receiver.start();
    topics = await openTopics(namespace);
    await writeConfig(topics, { id: 'web', name: 'Web', writeKey: 'wk_web_it_0123456789', enabled: true });
    await writeConfig(topics, webhooks('crm', receiver.url));
    await writeConfig(topics, webhooks('old', receiver.url, false));
    indexer = await startService('indexer', { env: { ...env, ADMIN_TOKEN: TOKEN, DELIVERY_LOG_DATABASE_URL: postgres.url, INSTANCE_ID: 'it-indexer' } });
    for (const name of ['router', 'dispatcher', 'retry-scheduler'] as const) services.push(await startService(name, { env: { ...env, INSTANCE_ID: `it-${name}` } }));
  }, 180_000);

  afterAll(async () => {
    for (const service of [...services, indexer]) await service?.stop();
    await topics?.producer.disconnect();
    await receiver.stop();
    await postgres?.destroy();
  });

  it('finds the message, its routing and both attempts of a receiver that fails once', { timeout: 60_000 }, async () => {
    const message = testMessage({ messageId: `it-${Date.now()}`, userId: 'u-it', anonymousId: null });
    await produceMessage(topics, message);
    const answer = await eventually(async () => {
      const { status, body } = await api<MessageAnswer>(indexer, `/messages/${encodeURIComponent(message.messageId)}`);
      return status === 200 && body.deliveries[0]?.state === 'delivered' && body.attempts.length === 2 ? body : undefined;
    }, 'the delivered message in the read API', 45_000);

    expect(receiver.requests.filter((request) => request.messageId === message.messageId).map((request) => request.status)).toEqual([503, 200]);
    expect(answer.messages).toHaveLength(1);
    expect(answer.messages[0]).toMatchObject({ sourceId: 'web', message: { messageId: message.messageId, event: 'Signed Up', properties: { plan: 'pro' } } });
    expect(answer.routing).toEqual([
      { sourceId: 'web', destinationId: 'crm', decision: 'routed', reason: null },
      { sourceId: 'web', destinationId: 'old', decision: 'filtered', reason: 'destination_disabled' },
    ]);
    expect(answer.deliveries).toEqual([
      expect.objectContaining({ deliveryId: `crm/web/${message.messageId}`, destinationId: 'crm', state: 'delivered', attempts: 2, lastStatus: 200, nextAttemptAt: null }),
    ]);
    expect(answer.attempts).toMatchObject([
      { kind: 'attempt', attempt: 1, outcome: 'retry', status: 503, lane: 'first', tier: '300ms', targets: [{ status: 503, responseBody: 'busy, try later', origin: receiver.url.replace('/hooks', '') }] },
      { kind: 'attempt', attempt: 2, outcome: 'delivered', status: 200, lane: 'retry', targets: [{ status: 200, responseBody: 'thanks' }] },
    ]);
    expect(answer.attempts[0]!.id).toMatch(/^\d+-\d+$/);

    const search = await api<{ attempts: Array<{ messageId: string; status: number }> }>(indexer, `/attempts?destination=crm&status=5xx&userId=u-it`);
    expect(search.body.attempts.map((attempt) => [attempt.messageId, attempt.status])).toEqual([[message.messageId, 503]]);
    const summary = await api<Record<string, unknown>>(indexer, '/destinations/crm/summary');
    expect(summary.body).toMatchObject({ destinationId: 'crm', attempts: 2, delivered: 1, failed: 1, successRate: 0.5, retriesPending: 0, circuit: null });
    const all = await api<{ destinations: Array<{ destinationId: string }> }>(indexer, '/delivery-summary');
    expect(all.body.destinations.map((entry) => entry.destinationId)).toEqual(['crm', 'old']);
    expect(await metricValue(indexer.url, 'tributary_indexer_records_total', { topic: topics.topics.attempts })).toBeGreaterThanOrEqual(2);
    // Offsets are committed just after the rows are written: the lag reaches 0 a moment later.
    await eventually(async () => (await metricValue(indexer.url, 'tributary_consumer_lag', { group: `${namespace}-indexer` })) === 0, 'no lag');
    const exposition = await (await fetch(`${indexer.url}/metrics`)).text();
    for (const topic of [topics.topics.attempts, topics.topics.ingest]) {
      for (const partition of ['0', '1']) expect(exposition).toContain(`tributary_consumer_lag{group="${namespace}-indexer",topic="${topic}",partition="${partition}",service="indexer"} 0`);
    }
  });

  it('quarantines a poison record on the attempts topic and indexes the record after it', { timeout: 60_000 }, async () => {
    const next = testAttempt({ messageId: `after-poison-${Date.now()}`, destinationId: 'crm' });
    // One key: the same partition, the valid record right behind the poison.
    await topics.producer.send({ topic: topics.topics.attempts, messages: [{ key: next.deliveryId, value: Buffer.from('{"not":"avro"}') }] });
    await produceAttempt(topics, next);
    await eventually(async () => (await api<{ attempts: unknown[] }>(indexer, `/attempts?messageId=${next.messageId}`)).body.attempts.length === 1, 'the record after the poison');

    const kafka = testKafka();
    const codec = testCodec();
    const quarantined = await readTopic(kafka, topics.topics.quarantine, { until: (records) => records.length >= 1 });
    const records = await Promise.all(quarantined.map(({ message }) => codec.decode<QuarantinedRecord>('quarantine', message.value)));
    expect(records).toEqual([expect.objectContaining({ service: 'indexer', sourceTopic: topics.topics.attempts, reason: 'not_framed' })]);
    expect(await metricValue(indexer.url, 'tributary_quarantined_total', { topic: topics.topics.attempts, reason: 'not_framed' })).toBe(1);
    // The poison's offset went with its quarantine record, in a transaction; the next ones by a
    // plain offset commit: the group's position reaches the end either way.
    await eventually(async () => (await metricValue(indexer.url, 'tributary_consumer_lag', { group: `${namespace}-indexer` })) === 0, 'no lag');
  });

  it('quarantines a record the database refuses, and indexes the rest of its batch', { timeout: 60_000 }, async () => {
    // Valid Avro, but an id no btree index takes (entries are limited to about 2.7 kB).
    const huge = testAttempt({ messageId: randomBytes(12_000).toString('base64'), destinationId: 'crm' });
    const after = testAttempt({ messageId: `after-refused-${Date.now()}`, destinationId: 'crm' });
    await topics.producer.send({
      topic: topics.topics.attempts,
      messages: [huge, after].map((attempt) => ({ key: 'same-partition', value: topics.codec.encode(topics.topics.attempts, attempt) })),
    });
    await eventually(async () => (await api<{ attempts: unknown[] }>(indexer, `/attempts?messageId=${after.messageId}`)).body.attempts.length === 1, 'the record after the refused one');
    const quarantined = await readTopic(testKafka(), topics.topics.quarantine, { until: (records) => records.length >= 2 });
    const reasons = await Promise.all(quarantined.map(async ({ message }) => (await testCodec().decode<QuarantinedRecord>('quarantine', message.value)).reason));
    expect(reasons.sort()).toEqual(['not_framed', 'unwritable']);
    expect(await metricValue(indexer.url, 'tributary_indexer_database_errors_total', { kind: 'data' })).toBeGreaterThanOrEqual(1);
  });

  it('waits out its database, unready, and catches up once it is back', { timeout: 120_000 }, async () => {
    await postgres.stop();
    const during = Array.from({ length: 20 }, (_, index) => testMessage({ messageId: `outage-${Date.now()}-${index}`, anonymousId: `anon-${index}` }));
    for (const message of during) await produceMessage(topics, message);
    await eventually(async () => (await fetch(`${indexer.url}/readyz`)).status === 503, '/readyz to say 503', 20_000);
    expect((await api(indexer, '/messages')).status).toBe(503);
    expect((await api(indexer, '/messages')).body).toMatchObject({ code: 'delivery_log_unavailable' });
    // Longer than a few retries' backoff: the process is still there.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(indexer.process.exitCode).toBeNull();

    await postgres.start();
    await eventually(async () => (await fetch(`${indexer.url}/readyz`)).status === 200, '/readyz to say 200 again', 60_000);
    for (const message of during) {
      await eventually(async () => (await api(indexer, `/messages/${message.messageId}`)).status === 200, `${message.messageId} indexed`, 60_000);
    }
    expect(await metricValue(indexer.url, 'tributary_indexer_database_errors_total', { kind: 'transient' })).toBeGreaterThan(0);
    expect(indexer.process.exitCode).toBeNull();
  });
});

describe('the indexer on its embedded PGlite', () => {
  const namespace = uniqueNamespace('indexer-pglite');
  let dataDir: string | undefined;
  let env: Record<string, string>;
  let topics: Topics;
  let indexer: RunningService | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-indexer-it-'));
    // A short session: the killed indexer's partitions come back to its successor quickly.
    env = { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN, DELIVERY_LOG_DATA_DIR: dataDir, INSTANCE_ID: 'it-indexer-pglite', INDEXER_SESSION_TIMEOUT: '6s' };
    topics = await openTopics(namespace);
    await writeConfig(topics, { id: 'web', name: 'Web', writeKey: 'wk_web_it_0123456789', enabled: true });
  }, 60_000);

  afterAll(async () => {
    await indexer?.stop();
    await topics?.producer.disconnect();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('indexes what producers write, answers in the admin API shape, and keeps it across a restart', { timeout: 90_000 }, async () => {
    indexer = await startService('indexer', { env });
    const message = testMessage({ messageId: `pglite-${Date.now()}` });
    await produceMessage(topics, message);
    await produceAttempt(topics, testAttempt({ messageId: message.messageId, destinationId: 'crm', outcome: 'dead', status: 410, deadReason: 'gone' }));
    const found = await eventually(async () => {
      const { status, body } = await api<MessageAnswer>(indexer!, `/messages/${message.messageId}`);
      return status === 200 && body.messages.length === 1 && body.attempts.length === 1 ? body : undefined;
    }, 'the message in the read API');
    // No destination is configured for `web` here: the router's own reason.
    expect(found.routing).toEqual([{ sourceId: 'web', destinationId: null, decision: 'filtered', reason: 'no_destinations' }]);
    expect(found.deliveries).toMatchObject([{ state: 'dead', lastStatus: 410 }]);

    expect(await api(indexer, '/messages/nobody-sent-this')).toMatchObject({ status: 404, body: { code: 'not_found', issues: [] } });
    expect(await api(indexer, '/attempts', null)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await api(indexer, '/attempts', 'wrong')).toMatchObject({ status: 401, body: { code: 'invalid_token' } });
    expect(await api(indexer, '/attempts?limit=1000')).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'limit' }] } });
    expect(await api(indexer, '/destinations/crm/timeline?bucket=10s&since=0')).toMatchObject({ status: 400, body: { issues: [{ path: 'bucket' }] } });
    expect(await api(indexer, '/destinations/nowhere/summary')).toMatchObject({ status: 404, body: { code: 'not_found' } });

    await indexer.stop();
    indexer = await startService('indexer', { env });
    expect((await api<MessageAnswer>(indexer, `/messages/${message.messageId}`)).body.attempts).toHaveLength(1);

    // Killed, not stopped: the embedded database recovers, and the lock its dead owner left is taken over.
    const later = testMessage({ messageId: `pglite-later-${Date.now()}` });
    await produceMessage(topics, later);
    await eventually(async () => (await api(indexer!, `/messages/${later.messageId}`)).status === 200, 'the later message');
    await indexer.kill();
    indexer = await startService('indexer', { env });
    expect((await api(indexer, `/messages/${later.messageId}`)).status).toBe(200);
    expect((await api<MessageAnswer>(indexer, `/messages/${message.messageId}`)).body.attempts).toHaveLength(1);

    await indexer.stop();
    indexer = await startService('indexer', { env: { ...env, ADMIN_TOKEN: '' } });
    expect(await api(indexer, '/attempts')).toMatchObject({ status: 404, body: { code: 'admin_disabled' } });
  });
});
