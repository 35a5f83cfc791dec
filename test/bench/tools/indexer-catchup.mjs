// How fast the delivery log's indexer catches up on a backlog, and what it costs per event: the
// pace after a restart, a database outage or a burst faster than it writes.
//
// Writes `events` accepted messages (ingest.v1) and as many delivered attempts (attempts.v1) to a
// fresh topic namespace, then starts the indexer (services/indexer/dist/main.js) on an empty
// PGlite directory with INDEXER_NICE=0 and times it from its first indexed record to the last,
// by its own `tributary_indexer_records_total`; its CPU from /proc over the same span.
// With the local stack running (node deploy/dist/local/with-stack.js -- sleep 3600 &) and the tree built:
//   node test/bench/tools/indexer-catchup.mjs [events=40000] [partitions=6] [rate=0]
// Prints records/s and the indexer's CPU µs per event (a message and its attempt). With a rate,
// the indexer is started first and the events are written at that pace (a tenth every 100 ms):
// its CPU per event at a steady load rather than on a backlog, and how many database
// transactions it wrote them in (records per transaction: whether a steady load writes smaller ones).
// The indexer runs with the services' Node options (SERVICE_NODE_ARGS); INDEXER_NODE_ARGS adds
// more to its command line (a later one wins), for instance
// INDEXER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" for a profile of the catch-up (start-up included).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deliveryKey, topicNames } from '../../../schemas/dist/index.js';
import { AvroCodec, createKafka, createLogger, createProducer, prepareTopics, topicDefinitions } from '../../../shared/dist/index.js';
import { SERVICE_NODE_ARGS } from '../../../deploy/dist/local/service-env.js';

const events = Number(process.argv[2] ?? 40_000);
const partitions = Number(process.argv[3] ?? 6);
const rate = Number(process.argv[4] ?? 0);
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';
const REGISTRY = process.env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7';
const PER_SEND = 500;
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const logger = createLogger({ service: 'indexer-catchup', level: 'warn' });

// Shaped like the benchmark's Track call and the dispatcher's record of its first, successful attempt.
function message(messageId, now) {
  return {
    type: 'track', sourceId: 'catchup', messageId, userId: `user-${messageId.slice(-4)}`, anonymousId: null,
    timestamp: now, originalTimestamp: null, sentAt: now, receivedAt: now, event: 'Order Completed',
    name: null, category: null, groupId: null, previousId: null,
    properties: JSON.stringify({ orderId: messageId, total: 42.5, currency: 'EUR', products: [{ sku: 'sku-1', quantity: 2 }] }),
    traits: null, context: JSON.stringify({ library: { name: 'analytics-go', version: '3.0.0' }, ip: '203.0.113.7' }), integrations: null,
  };
}

function attempt(messageId, now) {
  return {
    deliveryId: deliveryKey('catchup-hooks', messageId), messageId, sourceId: 'catchup', destinationId: 'catchup-hooks',
    messageType: 'track', userId: `user-${messageId.slice(-4)}`, anonymousId: null, kind: 'attempt', attempt: 1,
    outcome: 'delivered', lane: 'first', startedAt: now + 20, durationMs: 4, status: 200, error: null, deferReason: null,
    deadReason: null, nextAttemptAt: null, tier: null, receivedAt: now, replays: 0,
    targets: [{ urlIndex: 0, origin: 'http://127.0.0.1:9', outcome: 'success', status: 200, errorClass: null, error: null, durationMs: 4, responseBody: Buffer.from('ok'), retryAfterMs: null }],
  };
}

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The sum of a metric's series (0 while the indexer is not listening yet). */
async function metricSum(url, prefix) {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    let total = 0;
    for (const line of text.split('\n')) if (line.startsWith(prefix)) total += Number(line.split(' ').pop());
    return total;
  } catch {
    return 0;
  }
}
const indexed = (url) => metricSum(url, 'tributary_indexer_records_total{');
/** Database transactions so far (one per group commit). */
const writes = (url) => metricSum(url, 'tributary_indexer_batch_write_duration_seconds_count');

const namespace = `catchup-${Date.now().toString(36)}`;
const topics = topicNames(namespace);
const kafka = createKafka({ brokers: BROKERS.split(','), clientId: 'indexer-catchup', logger });
const codec = new AvroCodec({ registryUrl: REGISTRY, logger });
await prepareTopics({ kafka, codec, logger, definitions: topicDefinitions(topics), numPartitions: partitions });
const producer = createProducer(kafka);
await producer.connect();
const idOf = (index) => `catchup-${String(index).padStart(8, '0')}`;
async function send(from, count) {
  const now = Date.now();
  const ids = Array.from({ length: count }, (_, i) => idOf(from + i));
  await producer.send({ topic: topics.ingest, messages: ids.map((id) => ({ key: id, value: codec.encode(topics.ingest, message(id, now)) })) });
  await producer.send({ topic: topics.attempts, messages: ids.map((id) => ({ key: id, value: codec.encode(topics.attempts, attempt(id, now)) })) });
}
if (rate === 0) {
  for (let start = 0; start < events; start += PER_SEND) await send(start, Math.min(PER_SEND, events - start));
  console.log(`${events.toLocaleString('en')} messages and attempts written to ${namespace} (${partitions} partitions a topic)`);
}

const dataDir = mkdtempSync(join(tmpdir(), 'indexer-catchup-'));
const port = await freePort();
const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, ...(process.env.INDEXER_NODE_ARGS ?? '').split(' ').filter(Boolean), join(repo, 'services', 'indexer', 'dist', 'main.js')], {
  env: { PATH: process.env.PATH ?? '', KAFKA_BROKERS: BROKERS, SCHEMA_REGISTRY_URL: REGISTRY, TOPIC_NAMESPACE: namespace, KAFKA_TOPIC_PARTITIONS: String(partitions), DELIVERY_LOG_DATA_DIR: dataDir, INSTANCE_ID: 'catchup', INDEXER_NICE: '0', HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const url = `http://127.0.0.1:${port}`;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function untilIndexed(count) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the indexer exited with ${child.exitCode}`);
    if ((await indexed(url)) >= count) return;
    await pause(20);
  }
}
try {
  let startedAt = 0;
  let startCpu = 0;
  if (rate === 0) {
    // Timed from the first record indexed: start-up (PGlite's initdb) is not the pace.
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the indexer exited with ${child.exitCode}`);
      const done = await indexed(url);
      if (startedAt === 0 && done > 0) [startedAt, startCpu] = [performance.now(), cpuSeconds(child.pid)];
      if (done >= 2 * events) break;
      await pause(20);
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = cpuSeconds(child.pid) - startCpu;
    console.log(`caught up on ${(2 * events).toLocaleString('en')} records in ${seconds.toFixed(1)} s: ${Math.round((2 * events) / seconds).toLocaleString('en')} records/s; indexer CPU ${cpu.toFixed(1)} s, ${Math.round((cpu * 1e6) / events)} µs per event`);
  } else {
    // Paced: a warm-up chunk indexed first (the indexer started and caught up), then `rate`
    // events a second in tenths, as the router's and the dispatcher's commits bring them.
    const warm = Math.max(1, Math.round(rate / 10));
    await send(0, warm);
    await untilIndexed(2 * warm);
    [startedAt, startCpu] = [performance.now(), cpuSeconds(child.pid)];
    const writesBefore = await writes(url);
    let sent = warm;
    for (let tick = 1; sent < warm + events; tick++) {
      const count = Math.min(warm + events, warm + Math.round((tick * rate) / 10)) - sent;
      if (count > 0) await send(sent, count);
      sent += count;
      const wait = startedAt + tick * 100 - performance.now();
      if (wait > 0) await pause(wait);
    }
    await untilIndexed(2 * sent);
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = cpuSeconds(child.pid) - startCpu;
    const transactions = (await writes(url)) - writesBefore;
    console.log(
      `${events.toLocaleString('en')} events at ${rate.toLocaleString('en')}/s indexed in ${seconds.toFixed(1)} s; indexer CPU ${cpu.toFixed(1)} s, ${Math.round((cpu * 1e6) / events)} µs per event, ` +
        `${Math.round((cpu * 100) / seconds)} % of a core; ${transactions} database transactions, ${Math.round((2 * events) / Math.max(1, transactions))} records each`,
    );
  }
} finally {
  await producer.disconnect();
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
