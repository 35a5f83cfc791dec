/**
 * Exactly once under failure: a router killed with SIGKILL in the middle of a large batch
 * and restarted, or fenced by another producer registering its transactional id while it
 * routes, must leave exactly one delivery record per (message × destination) — none lost
 * with an aborted transaction, none doubled by routing a chunk again.
 *
 * The backlogs are written to the ingest topic directly, faster than ROUTER_SOURCE_RATE, so
 * most of each is moved to the overflow lane and routed from there (its deliveries written to
 * the retry lane): the kill and the fencing strike both the moving and the routing, and the
 * deliveries are counted over both delivery topics.
 */
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { deliveryKey, type IngestMessage } from '@tributary/schemas';
import { createProducer, withAdmin } from '@tributary/shared';
import { metricValue, type RunningService, stackEnv, startService, uniqueNamespace } from '@tributary/test/harness';
import { DeliveryWatcher, destination, openStack, source, trackMessage, writeConfig, type Stack } from './__fixtures__/stack.js';

const DESTINATIONS = ['alpha', 'beta'];

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Writes the messages across both partitions (one user per message), `perSend` at a time. */
async function produce(stack: Stack, messages: IngestMessage[], perSend: number): Promise<void> {
  for (let start = 0; start < messages.length; start += perSend) {
    await stack.producer.send({
      topic: stack.topics.ingest,
      messages: messages.slice(start, start + perSend).map((message) => ({ key: message.anonymousId, value: stack.codec.encode(stack.topics.ingest, message) })),
    });
  }
}

/** `messages` are written before the router starts, so it is busy routing a backlog when the failure strikes. */
async function setUp(prefix: string, messages: number, { backlog: writeFirst = true } = {}) {
  const namespace = uniqueNamespace(prefix);
  const stack = await openStack(namespace);
  cleanup.push(() => stack.close());
  await writeConfig(stack, source('web'));
  for (const id of DESTINATIONS) await writeConfig(stack, destination(id, ['web']));
  const backlog: IngestMessage[] = Array.from({ length: messages }, (_, index) =>
    trackMessage(`${prefix}-${index}`, { anonymousId: `anon-${index}`, userId: null, properties: JSON.stringify({ index, note: 'ünïcode ✓' }) }),
  );
  if (writeFirst) await produce(stack, backlog, 1000);
  // A short session lets the group hand a dead router's partitions to its successor quickly.
  const env = { ...stackEnv(namespace), INSTANCE_ID: `${prefix}-router`, ROUTER_MAX_BATCH: '500', ROUTER_SESSION_TIMEOUT: '6s' };
  const start = async (): Promise<RunningService> => {
    const service = await startService('router', { env });
    cleanup.push(() => service.stop());
    return service;
  };
  return { namespace, stack, backlog, env, start };
}

/** Offsets (records and transaction markers) committed to the two delivery topics so far. */
async function committedDeliveryOffsets(stack: Stack): Promise<number> {
  let total = 0;
  for (const topic of [stack.topics.deliveries, stack.topics.dueRetries]) {
    const offsets = await withAdmin(stack.kafka, (admin) => admin.fetchTopicOffsets(topic));
    total += offsets.reduce((sum, { high }) => sum + Number(high), 0);
  }
  return total;
}

/** Whether the group's committed offsets reached the end of `topic`. */
async function consumedToEnd(stack: Stack, groupId: string, topic: string): Promise<boolean> {
  const [committed] = await withAdmin(stack.kafka, (admin) => admin.fetchOffsets({ groupId, topics: [topic] }));
  const ends = await withAdmin(stack.kafka, (admin) => admin.fetchTopicOffsets(topic));
  return ends.every(({ partition, high }) => Number(high) === 0 || committed?.partitions.find((entry) => entry.partition === partition)?.offset === high);
}

async function waitUntilPartlyRouted(stack: Stack, expected: number): Promise<void> {
  while ((await committedDeliveryOffsets(stack)) < expected * 0.2) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Waits until every message is routed and committed, then checks one record per (message × destination). */
async function expectExactlyOnce(stack: Stack, namespace: string, backlog: IngestMessage[], router: RunningService): Promise<void> {
  const expected = backlog.length * DESTINATIONS.length;
  const watchers = [new DeliveryWatcher(stack), new DeliveryWatcher(stack, stack.topics.dueRetries)];
  for (const watcher of watchers) await watcher.start();
  const seen = () => watchers.flatMap((watcher) => watcher.seen);
  try {
    await Promise.race([
      (async () => {
        const deadline = Date.now() + 240_000;
        while (seen().length < expected) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${expected} deliveries; seen ${seen().length}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })(),
      router.exited.then((code) => Promise.reject(new Error(`the router exited (${code}) before routing everything; see ${router.logFile}`))),
    ]);
    // Routing is over once both groups' committed offsets reached the ends of their topics.
    await expect
      .poll(
        async () =>
          (await consumedToEnd(stack, `${namespace}-router`, stack.topics.ingest)) && (await consumedToEnd(stack, `${namespace}-router-overflow`, stack.topics.ingestOverflow)),
        { timeout: 30_000, interval: 200 },
      )
      .toBe(true);
    for (const watcher of watchers) await watcher.settle();

    const counts = new Map<string, number>();
    for (const { key } of seen()) counts.set(key, (counts.get(key) ?? 0) + 1);
    const doubled = [...counts].filter(([, count]) => count > 1);
    const missing = backlog.flatMap(({ messageId, sourceId }) => DESTINATIONS.map((id) => deliveryKey(id, sourceId, messageId))).filter((key) => !counts.has(key));
    expect({ records: seen().length, doubled: doubled.slice(0, 5), missing: missing.slice(0, 5) }).toEqual({ records: expected, doubled: [], missing: [] });
    for (const { key, delivery } of seen()) expect(key).toBe(delivery.deliveryId);
  } finally {
    for (const watcher of watchers) await watcher.stop();
  }
}

it('a router killed mid-batch and restarted yields exactly one delivery per message and destination', { timeout: 300_000 }, async () => {
  const { namespace, stack, backlog, start } = await setUp('crash', 20_000);
  const first = await start();
  await waitUntilPartlyRouted(stack, backlog.length * DESTINATIONS.length);
  await first.kill();
  const atKill = await committedDeliveryOffsets(stack);
  expect(atKill).toBeLessThan(backlog.length * DESTINATIONS.length * 0.9);

  const second = await start();
  await expectExactlyOnce(stack, namespace, backlog, second);
  expect(await metricValue(second.url, 'tributary_router_duplicates_total')).toBe(0);
  const overflow = await withAdmin(stack.kafka, (admin) => admin.fetchTopicOffsets(stack.topics.ingestOverflow));
  const movedOffsets = overflow.reduce((sum, { high }) => sum + Number(high), 0);
  console.log(`crash test: killed after ${atKill} of ${backlog.length * DESTINATIONS.length} delivery offsets were committed; ${movedOffsets} offsets written to the overflow lane`);
  expect(movedOffsets, 'the backlog went partly through the overflow lane').toBeGreaterThan(0);
});

it('a router fenced mid-batch by another producer with its transactional id recovers without loss or doubles', { timeout: 300_000 }, async () => {
  const { namespace, stack, backlog, env, start } = await setUp('fenced', 10_000);
  const router = await start();
  await waitUntilPartlyRouted(stack, backlog.length * DESTINATIONS.length);

  await fenceRouter(stack.kafka, `${namespace}-router-${env.INSTANCE_ID}`);

  await expectExactlyOnce(stack, namespace, backlog, router);
  expect(await metricValue(router.url, 'tributary_router_transaction_failures_total')).toBeGreaterThanOrEqual(1);
  expect(router.process.exitCode).toBeNull();
  expect(readFileSync(router.logFile, 'utf8')).toMatch(/routing transaction failed; its chunks will be routed again/);
});

it('a router fenced while its transactions span both partitions of live traffic recovers without loss or doubles', { timeout: 300_000 }, async () => {
  const { namespace, stack, backlog, env, start } = await setUp('fenced-live', 6_000, { backlog: false });
  const router = await start();
  // Written as ingest writes: small transactions across both partitions while the router
  // runs, so each fetch finds a little on each partition and their chunks share a transaction.
  const ingest = createProducer(stack.kafka, { transactionalId: `${namespace}-test-ingest` });
  await ingest.connect();
  cleanup.push(() => ingest.disconnect());
  const producing = (async () => {
    for (let start = 0; start < backlog.length; start += 20) {
      const transaction = await ingest.transaction();
      await transaction.send({
        topic: stack.topics.ingest,
        messages: backlog.slice(start, start + 20).map((message) => ({ key: message.anonymousId, value: stack.codec.encode(stack.topics.ingest, message) })),
      });
      await transaction.commit();
    }
  })();
  await waitUntilPartlyRouted(stack, backlog.length * DESTINATIONS.length);

  await fenceRouter(stack.kafka, `${namespace}-router-${env.INSTANCE_ID}`);
  await producing;

  await expectExactlyOnce(stack, namespace, backlog, router);
  expect(await metricValue(router.url, 'tributary_router_transaction_failures_total')).toBeGreaterThanOrEqual(1);
  const transactions = await metricValue(router.url, 'tributary_router_transaction_partitions_count');
  expect(await metricValue(router.url, 'tributary_router_transaction_partitions_sum')).toBeGreaterThan(transactions);
  expect(router.process.exitCode).toBeNull();
});

/** Registering the router's transactional id fences the router's producer and aborts its open transaction. */
async function fenceRouter(kafka: Kafka, transactionalId: string): Promise<void> {
  const intruder = createProducer(kafka, { transactionalId });
  await intruder.connect();
  const registration = await intruder.transaction();
  await registration.abort();
  await intruder.disconnect();
}
