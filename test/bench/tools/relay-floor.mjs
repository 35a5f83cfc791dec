// The floor under the pipeline's CPU per event: the same Kafka topology with no work of our own.
//
// Three hops as the services make them, each in its own process, with the services' Kafka
// settings (shared createKafka/createProducer/createConsumer, the kafkajs fixes, the group commit):
//   source  (ingest)     writes records of about an ingest record's size, requests of 100, those due
//                        together in one transaction (ingest's group commit)
//   relay   (router)     reads them read_committed and writes each again to a second topic, the
//                        chunks of one fetch in one transaction with their offsets (GroupCommit)
//   sender  (dispatcher) reads those, POSTs each to a receiver (undici, 64 connections), and
//                        every 250 ms writes one record per delivery with the offsets, in a transaction
// and a receiver answering 200. No Avro, no validation, no routing, no signing, no metrics, no
// logging, no HTTP in front of the source: what is left is what kafkajs, the broker and undici
// cost for the topology. Writes are split under the broker's size limit as the services split
// them (sendInChunks). `plain` writes without transactions (idempotent producers, offsets by
// OffsetCommit), to tell what the exactly-once hops cost.
//
// With the local stack running (node deploy/dist/local/with-stack.js -- sleep 3600 &) and the tree built:
//   node test/bench/tools/relay-floor.mjs [rate=1000] [seconds=40] [txn|plain] [trickle=0]
// `trickle` > 0 adds a second source sending that many one-event requests a second, each
// written alone (as ingest writes them): the noisy-neighbour scenario's trickle, measured apart.
// Prints, for the measured window after a 10 s warm-up: delivered/s, end-to-end latency
// (source send → receiver) p50/p99, and CPU ms per 1,000 delivered events of each process and
// of the broker (from /proc, like the bench).
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createConsumer, createKafka, createLogger, createProducer, GroupCommit, sendInChunks } from '../../../shared/dist/index.js';

const BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const PER_REQUEST = 100;
const MAX_GROUPED = 10;
const RECORD_BYTES = 1_000; // a little over the bench's Track call (its webhook body alone is 740 B)
const ATTEMPT_BYTES = 400;
const OUTCOME_INTERVAL_MS = 250;
const WARMUP_S = 10;

function env(name) {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} unset`);
  return value;
}

function kafkaFor(name) {
  return createKafka({ brokers: BROKERS, clientId: `floor-${name}`, logger: createLogger({ service: `floor-${name}`, level: 'warn' }) });
}

const transactional = () => env('FLOOR_MODE') === 'txn';

async function source() {
  const kafka = kafkaFor('source');
  const producer = createProducer(kafka, transactional() ? { transactionalId: `floor-source-${process.pid}` } : {});
  await producer.connect();
  const topic = env('FLOOR_IN');
  let rate = 0;
  process.on('message', (m) => (rate = m.rate));
  process.send({ kind: 'ready' });
  // The trickle source sends one event per request, as an app does, written alone without a
  // transaction (as ingest writes a lone one-event request); its records carry "q":1.
  const trickle = process.env.FLOOR_TRICKLE === '1';
  const perRequest = trickle ? 1 : PER_REQUEST;
  const maxGrouped = trickle ? 1 : MAX_GROUPED;
  let seq = 0;
  const pad = 'x'.repeat(RECORD_BYTES - 40);
  let origin = performance.now();
  let sent = 0;
  for (;;) {
    if (rate === 0) {
      await sleep(20);
      origin = performance.now();
      sent = 0;
      continue;
    }
    const due = ((performance.now() - origin) / 1000) * rate;
    if (sent + perRequest > due) {
      await sleep(Math.max(1, ((sent + perRequest - due) / rate) * 1000));
      continue;
    }
    // Requests that came due while the last transaction was open share the next one, as
    // ingest's group commit makes them (up to MAX_GROUPED).
    const requests = Math.min(maxGrouped, Math.floor((due - sent) / perRequest));
    const now = performance.timeOrigin + performance.now();
    const messages = Array.from({ length: requests * perRequest }, () => ({ key: `anon-${seq++ % 5000}`, value: `{"t":${now.toFixed(3)},${trickle ? '"q":1,' : ''}"p":"${pad}"}` }));
    sent += messages.length;
    if (transactional() && !trickle) {
      const transaction = await producer.transaction();
      await sendInChunks(transaction, [{ topic, messages }]);
      await transaction.commit();
    } else await sendInChunks(producer, [{ topic, messages }]);
  }
}

/** Writes `output` and commits the `consumed` offsets: in one transaction, or (plain) one after the other. */
async function writeWithOffsets(producer, consumer, groupId, output, consumed) {
  if (transactional()) {
    const transaction = await producer.transaction();
    await sendInChunks(transaction, [output]);
    await transaction.sendOffsets({ consumerGroupId: groupId, topics: [consumed] });
    await transaction.commit();
  } else {
    await sendInChunks(producer, [output]);
    await consumer.commitOffsets(consumed.partitions.map((p) => ({ topic: consumed.topic, ...p })));
  }
}

async function relay() {
  const kafka = kafkaFor('relay');
  const groupId = env('FLOOR_IN') + '-relay';
  const output = env('FLOOR_MID');
  const producer = createProducer(kafka, transactional() ? { transactionalId: `floor-relay-${process.pid}` } : {});
  await producer.connect();
  const consumer = createConsumer(kafka, groupId);
  const commit = async (chunks) => {
    const messages = chunks.flatMap((chunk) => chunk.messages.map((m) => ({ key: m.key, value: m.value })));
    const partitions = chunks.map((chunk) => ({ partition: chunk.partition, offset: (BigInt(chunk.last) + 1n).toString() }));
    await writeWithOffsets(producer, consumer, groupId, { topic: output, messages }, { topic: env('FLOOR_IN'), partitions });
  };
  const group = new GroupCommit({ maxRecords: 2_000, records: (chunk) => chunk.messages.length, commit });
  await consumeInGroup(consumer, env('FLOOR_IN'), async ({ batch, resolveOffset }) => {
    if (batch.messages.length === 0) return;
    await group.submit({ partition: batch.partition, messages: batch.messages, last: batch.lastOffset() });
    resolveOffset(batch.lastOffset());
  });
}

async function sender() {
  const kafka = kafkaFor('sender');
  const groupId = env('FLOOR_MID') + '-sender';
  const producer = createProducer(kafka, transactional() ? { transactionalId: `floor-sender-${process.pid}` } : {});
  await producer.connect();
  const pool = new Pool(env('FLOOR_RECEIVER'), { connections: 64, pipelining: 1 });
  const consumer = createConsumer(kafka, groupId);
  const attempt = 'a'.repeat(ATTEMPT_BYTES);
  let staged = [];
  const offsets = new Map();
  const flush = async () => {
    if (staged.length === 0) return;
    const messages = staged;
    staged = [];
    const partitions = [...offsets].map(([partition, offset]) => ({ partition, offset }));
    offsets.clear();
    await writeWithOffsets(producer, consumer, groupId, { topic: env('FLOOR_OUT'), messages }, { topic: env('FLOOR_MID'), partitions });
  };
  (async () => {
    for (;;) {
      await sleep(OUTCOME_INTERVAL_MS);
      await flush();
    }
  })();
  await consumeInGroup(consumer, env('FLOOR_MID'), async ({ batch, resolveOffset }) => {
    await Promise.all(
      batch.messages.map(async (m) => {
        const response = await pool.request({ method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: m.value, headersTimeout: 5_000, bodyTimeout: 5_000 });
        await response.body.dump();
        staged.push({ key: m.key, value: attempt });
      }),
    );
    if (batch.messages.length > 0) offsets.set(batch.partition, (BigInt(batch.lastOffset()) + 1n).toString());
    resolveOffset(batch.lastOffset());
  });
}

/** Joins the role's group (telling the orchestrator once it has), reading `topic` from the start, offsets committed by the role. */
async function consumeInGroup(consumer, topic, eachBatch) {
  consumer.on(consumer.events.GROUP_JOIN, () => process.send({ kind: 'ready' }));
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ autoCommit: false, partitionsConsumedConcurrently: 6, eachBatch });
}

async function receiver() {
  let count = 0;
  const latencies = [];
  const trickleLatencies = [];
  let measuring = false;
  process.on('message', (m) => {
    if (m.kind === 'measure') {
      measuring = true;
      count = 0;
      latencies.length = 0;
      trickleLatencies.length = 0;
    } else if (m.kind === 'report') process.send({ kind: 'report', count, latencies, trickleLatencies });
  });
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      if (measuring) {
        count++;
        const text = Buffer.concat(chunks).toString('latin1', 0, 40);
        const latency = performance.timeOrigin + performance.now() - Number(/"t":([\d.]+)/.exec(text)[1]);
        (text.includes('"q":1') ? trickleLatencies : latencies).push(latency);
      }
      response.end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send({ kind: 'ready', port: server.address().port }));
}

async function orchestrate(rate, seconds, mode, trickleRate) {
  if (mode !== 'txn' && mode !== 'plain') throw new Error('mode is txn or plain');
  const stamp = Date.now().toString(36);
  const topics = { FLOOR_IN: `floor-${stamp}.in`, FLOOR_MID: `floor-${stamp}.mid`, FLOOR_OUT: `floor-${stamp}.out` };
  const kafka = kafkaFor('orchestrator');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: Object.values(topics).map((topic) => ({ topic, numPartitions: 6 })), waitForLeaders: true });
  const self = fileURLToPath(import.meta.url);
  const children = [];
  let finishing = false;
  const start = (name, extra = {}) => {
    const child = fork(self, [name], { env: { ...process.env, ...topics, ...extra, FLOOR_MODE: mode } });
    children.push(child);
    // A role that dies (a refused write, a lost broker) ends the measurement: nothing else would.
    child.on('exit', (code, signal) => {
      if (finishing) return;
      finishing = true;
      console.error(`the ${name} process ended (${signal ?? `exit ${code}`}); no figures`);
      for (const other of children) other.kill('SIGKILL');
      void admin.deleteTopics({ topics: Object.values(topics) }).catch(() => {}).finally(() => process.exit(1));
    });
    const ready = new Promise((resolve) => child.on('message', (m) => m.kind === 'ready' && resolve(m)));
    return { name, child, ready };
  };
  const receiverChild = start('receiver');
  const { port } = await receiverChild.ready;
  const mainSource = start('source');
  const trickleSource = trickleRate > 0 ? start('source', { FLOOR_TRICKLE: '1' }) : undefined;
  const workers = [start('relay'), start('sender', { FLOOR_RECEIVER: `http://127.0.0.1:${port}` }), mainSource, ...(trickleSource ? [trickleSource] : [])];
  await Promise.all(workers.map((w) => w.ready));
  mainSource.child.send({ rate });
  trickleSource?.child.send({ rate: trickleRate });
  await sleep(WARMUP_S * 1000);
  const broker = brokerPid();
  const processes = [...workers, receiverChild].map((w) => ({ name: w.name, pid: w.child.pid })).concat([{ name: 'broker', pid: broker }]);
  const before = processes.map((p) => cpuMs(p.pid));
  receiverChild.child.send({ kind: 'measure' });
  const startedAt = performance.now();
  await sleep(seconds * 1000);
  const after = processes.map((p) => cpuMs(p.pid));
  const elapsed = (performance.now() - startedAt) / 1000;
  receiverChild.child.send({ kind: 'report' });
  const report = await new Promise((resolve) => receiverChild.child.on('message', (m) => m.kind === 'report' && resolve(m)));
  mainSource.child.send({ rate: 0 });
  const thousands = report.count / 1000;
  const percentile = (values) => {
    const sorted = values.sort((a, b) => a - b);
    return (p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
  };
  const pct = percentile(report.latencies);
  console.log(`${mode}, offered ${rate}/s for ${seconds} s: delivered ${(report.count / elapsed).toFixed(0)}/s, latency p50 ${pct(0.5).toFixed(1)} ms, p99 ${pct(0.99).toFixed(1)} ms`);
  if (trickleRate > 0) {
    const trickle = percentile(report.trickleLatencies);
    console.log(`  trickle, ${trickleRate}/s one event per request: ${report.trickleLatencies.length} delivered, latency p50 ${trickle(0.5).toFixed(1)} ms, p99 ${trickle(0.99).toFixed(1)} ms`);
  }
  let total = 0;
  let pipeline = 0;
  for (const [i, p] of processes.entries()) {
    const spent = after[i] - before[i];
    total += spent;
    if (p.name !== 'receiver') pipeline += spent;
    console.log(`  ${p.name.padEnd(9)} ${(spent / elapsed / 10).toFixed(1).padStart(5)} % of a core, ${(spent / thousands).toFixed(0).padStart(4)} CPU ms per 1,000 delivered`);
  }
  console.log(`  sources + relay + sender + broker: ${(pipeline / thousands).toFixed(0)} ms per 1,000 delivered; with the receiver ${(total / thousands).toFixed(0)}`);
  finishing = true;
  for (const child of children) child.kill('SIGKILL');
  await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => {});
  await admin.disconnect();
  process.exit(0);
}

/** The local broker's JVM: the java process running kafka.Kafka. */
function brokerPid() {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv;
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv[0]?.endsWith('java') && argv.includes('kafka.Kafka')) return Number(entry);
  }
  throw new Error('no local Kafka broker (a java process running kafka.Kafka) found');
}

/** utime + stime of a process, in ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const role = process.argv[2];
const roles = { source, relay, sender, receiver };
if (role in roles) {
  // The orchestrator going away ends every role too.
  process.on('disconnect', () => process.exit(0));
  await roles[role]();
}
else await orchestrate(Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 40), process.argv[4] ?? 'txn', Number(process.argv[5] ?? 0));
