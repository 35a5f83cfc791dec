// Where the noisy-neighbour trickle's time goes, second by second of a phase: from ingest's
// receipt to the router's delivery record (ingest's transaction, the router's fetch and
// routing; the record's CreateTime is set when the router sends it, before its commit), and
// from there to the dispatcher's attempt start (the router's commit, the dispatcher's fetch and
// queue). Reads a run's kept topics on the local stack, so run the scenario on a stack that
// outlives it, with --keep-topics:
//   node deploy/dist/local/with-stack.js -- sleep 7200 &
//   npm run bench -- --scenario=noisy-neighbour --keep-topics [--burst-events=20000 …]
//   node test/bench/tools/trickle-stages.mjs <namespace> <phase start, ISO> [seconds=30] [destination=healthy]
// The namespace is in the run's first lines; a phase starts at the run's start plus the offset
// its "burst to …" line gives. Build schemas first (npx turbo run build).
import { createRequire } from 'node:module';
import { avroType } from '../../../schemas/dist/index.js';

const require = createRequire(new URL('../../../shared/package.json', import.meta.url));
const { Kafka, logLevel } = require('kafkajs');

const [namespace, startIso, secondsArg = '30', destinationId = 'healthy'] = process.argv.slice(2);
if (!namespace || !startIso) throw new Error('usage: trickle-stages.mjs <namespace> <phase start, ISO> [seconds] [destination]');
const start = Date.parse(startIso);
const seconds = Number(secondsArg);
const kafka = new Kafka({ brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), logLevel: logLevel.NOTHING });

/** Every record of a topic, decoded (the writer's schema is the reader's: the 5-byte header is skipped), picked by `pick`. */
async function readAll(topic, schema, pick) {
  const type = avroType(schema);
  const consumer = kafka.consumer({ groupId: `trickle-stages-${process.pid}-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const picked = new Map();
  let lastRead = Date.now();
  await consumer.run({
    eachMessage: async ({ message }) => {
      lastRead = Date.now();
      const entry = pick(type.fromBuffer(message.value.subarray(5)), message);
      if (entry) picked.set(entry.id, entry);
    },
  });
  while (Date.now() - lastRead < 4000) await new Promise((resolve) => setTimeout(resolve, 500));
  await consumer.disconnect();
  return picked;
}

const routed = await readAll(`${namespace}.deliveries.v1`, 'delivery', (delivery, message) =>
  delivery.destinationId === destinationId ? { id: delivery.deliveryId, receivedAt: Number(delivery.receivedAt), routedAt: Number(message.timestamp) } : undefined,
);
const started = await readAll(`${namespace}.attempts.v1`, 'attempt', (attempt) =>
  attempt.destinationId === destinationId && attempt.kind === 'attempt' && attempt.attempt === 1 ? { id: attempt.deliveryId, startedAt: Number(attempt.startedAt) } : undefined,
);
const bySecond = new Map();
for (const delivery of routed.values()) {
  const attempt = started.get(delivery.id);
  const second = Math.floor((delivery.receivedAt - start) / 1000);
  if (!attempt || second < 0 || second >= seconds) continue;
  const stats = bySecond.get(second) ?? { count: 0, routeMax: 0, routeSum: 0, dispatchMax: 0, dispatchSum: 0 };
  const route = delivery.routedAt - delivery.receivedAt;
  const dispatch = attempt.startedAt - delivery.routedAt;
  stats.count++;
  stats.routeMax = Math.max(stats.routeMax, route);
  stats.routeSum += route;
  stats.dispatchMax = Math.max(stats.dispatchMax, dispatch);
  stats.dispatchSum += dispatch;
  bySecond.set(second, stats);
}
console.log('second  events  receipt→routed mean / max ms  routed→attempt mean / max ms');
for (const [second, s] of [...bySecond].sort((a, b) => a[0] - b[0])) {
  console.log(`+${String(second).padEnd(6)} ${String(s.count).padStart(6)}  ${(s.routeSum / s.count).toFixed(1).padStart(14)} / ${String(s.routeMax).padEnd(12)} ${(s.dispatchSum / s.count).toFixed(1).padStart(12)} / ${s.dispatchMax}`);
}
