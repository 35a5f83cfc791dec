/**
 * How fast the indexer writes, on each database:
 *
 * - store: rows/s of DeliveryLogStore.write alone (mapping done beforehand), in batches of
 *   INDEXER_MAX_BATCH (2,000) attempts, in-process;
 * - process: the indexer as deployed catching up on a backlog of BENCH_ATTEMPTS attempts
 *   (default 20,000) and a quarter as many messages written to Kafka before it starts —
 *   records/s from readiness to the last record indexed, and the CPU the process spent per
 *   1,000 records (process_cpu_seconds_total).
 *
 *   npx turbo run build --filter=@tributary/indexer && cd services/indexer && npm run bench
 *   (BENCH_ATTEMPTS=n for a larger backlog, BENCH_CPU_PROF_DIR=dir for CPU profiles of the indexer)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startThrowawayPostgres, type ThrowawayPostgres } from '@tributary/deploy/postgres';
import { topicNames, type DeliveryAttempt, type IngestMessage } from '@tributary/schemas';
import { createProducer, prepareTopics, topicDefinitions } from '@tributary/shared';
import { metricValue, stackEnv, startService, testCodec, testKafka, testLogger, uniqueNamespace } from '@tributary/test/harness';
import { attemptRow } from '../src/rows.js';
import { openPglite } from '../src/sql/pglite.js';
import { openPostgres } from '../src/sql/postgres.js';
import { DeliveryLogStore } from '../src/store/store.js';
import { foldDeliveryStates } from '../src/rows.js';
import { testAttempt, testMessage } from '../src/test-records.js';

const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 20_000);
const BATCH = 2000;

let postgres: ThrowawayPostgres;
const dataDirs: string[] = [];
beforeAll(async () => {
  postgres = await startThrowawayPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.destroy();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function attempts(count: number, prefix: string): DeliveryAttempt[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, index) =>
    testAttempt({
      messageId: `${prefix}-${Math.floor(index / 2)}`,
      destinationId: `dest-${index % 20}`,
      startedAt: now - (count - index),
      attempt: (index % 2) + 1,
      outcome: index % 2 === 0 ? 'retry' : 'delivered',
      status: index % 2 === 0 ? 503 : 200,
      error: index % 2 === 0 ? 'HTTP 503' : null,
    }),
  );
}

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-indexer-bench-'));
  dataDirs.push(dir);
  return dir;
};

it('store: rows/s written by one writer', async () => {
  for (const [name, open] of [
    ['PGlite', () => openPglite(tempDir())],
    ['PostgreSQL', () => openPostgres({ url: postgres.url })],
  ] as const) {
    const store = new DeliveryLogStore(await open());
    await store.migrate();
    const records = attempts(ATTEMPTS, `store-${name}`);
    const started = performance.now();
    let rows = 0;
    for (let first = 0; first < records.length; first += BATCH) {
      const batch = records.slice(first, first + BATCH).map((record, index) => attemptRow(record, 0, first + index));
      const counts = await store.write({ attempts: batch, messages: [], states: foldDeliveryStates(batch) });
      rows += counts.attempts + counts.deliveries;
    }
    const seconds = (performance.now() - started) / 1000;
    console.info(`[bench store] ${name}: ${ATTEMPTS} attempts (${rows} rows with delivery states) in ${seconds.toFixed(2)} s = ${Math.round(ATTEMPTS / seconds)} attempts/s, ${Math.round(rows / seconds)} rows/s`);
    await store.close();
  }
});

it('process: catching up on a backlog', async () => {
  for (const database of ['PGlite', 'PostgreSQL'] as const) {
    const namespace = uniqueNamespace('indexer-bench');
    const topics = topicNames(namespace);
    const kafka = testKafka();
    const codec = testCodec();
    await prepareTopics({ kafka, codec, logger: testLogger(), definitions: topicDefinitions(topics), numPartitions: Number(stackEnv().KAFKA_TOPIC_PARTITIONS) });
    const producer = createProducer(kafka);
    await producer.connect();
    const attemptRecords = attempts(ATTEMPTS, `proc-${database}`);
    const messages: IngestMessage[] = Array.from({ length: ATTEMPTS / 4 }, (_, index) => testMessage({ messageId: `proc-${database}-${index}`, anonymousId: `anon-${index % 50}` }));
    for (let first = 0; first < attemptRecords.length; first += 1000) {
      await producer.send({ topic: topics.attempts, messages: attemptRecords.slice(first, first + 1000).map((record) => ({ key: record.deliveryId, value: codec.encode(topics.attempts, record) })) });
    }
    for (let first = 0; first < messages.length; first += 1000) {
      await producer.send({ topic: topics.ingest, messages: messages.slice(first, first + 1000).map((message) => ({ key: message.anonymousId, value: codec.encode(topics.ingest, message) })) });
    }
    await producer.disconnect();
    const total = attemptRecords.length + messages.length;

    let databaseUrl: string | undefined;
    if (database === 'PostgreSQL') {
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: postgres.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${namespace.replaceAll('-', '_')}`);
      await admin.end();
      databaseUrl = postgres.urlFor(namespace.replaceAll('-', '_'));
    }
    const indexer = await startService('indexer', {
      env: { ...stackEnv(namespace), ...(databaseUrl ? { DELIVERY_LOG_DATABASE_URL: databaseUrl } : { DELIVERY_LOG_DATA_DIR: tempDir() }), LOG_LEVEL: 'warn' },
      readyTimeoutMs: 120_000,
      // BENCH_CPU_PROF_DIR=<dir>: a V8 CPU profile of each indexer run, for finding where its time goes.
      nodeArgs: process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [],
    });
    const count = async () =>
      (await metricValue(indexer.url, 'tributary_indexer_records_total', { topic: topics.attempts })) + (await metricValue(indexer.url, 'tributary_indexer_records_total', { topic: topics.ingest }));
    const startCount = await count();
    const startCpu = await metricValue(indexer.url, 'process_cpu_seconds_total');
    const started = performance.now();
    while ((await count()) < total) await new Promise((resolve) => setTimeout(resolve, 100));
    const seconds = (performance.now() - started) / 1000;
    const cpu = (await metricValue(indexer.url, 'process_cpu_seconds_total')) - startCpu;
    const indexed = total - startCount;
    const rows = (await metricValue(indexer.url, 'tributary_indexer_rows_written_total')) ;
    console.info(
      `[bench process] ${database}: ${indexed} records indexed after readiness (of ${total}; ${rows} rows in all) in ${seconds.toFixed(2)} s = ${Math.round(indexed / seconds)} records/s; CPU ${((cpu / indexed) * 1000 * 1000).toFixed(0)} ms per 1,000 records`,
    );
    expect(await count()).toBe(total);
    await indexer.stop();
  }
});
