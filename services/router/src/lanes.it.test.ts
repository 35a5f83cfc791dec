/**
 * The router's lanes, on the real broker with the router as a child process: a backlog in the
 * overflow lane (what a source sent past INGEST_SOURCE_RATE) does not hold back the main lane,
 * and its deliveries go to the dispatchers' retry lane, not in front of the main lane's first
 * attempts; a messageId repeated across the lanes is still forwarded once, and the deliveries of a
 * destination whose circuit is open at every dispatcher are deferred onto the ladder, those of a
 * half-open or congested one go through the retry lane.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinationHealthKey, type DestinationHealth, type IngestMessage, type RetryRecord } from '@tributary/schemas';
import { eventually, metricValue, readTopicToEnd, stackEnv, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { DeliveryWatcher, destination, openStack, source, trackMessage, writeConfig, type Stack } from './__fixtures__/stack.js';

const namespace = uniqueNamespace('lanes');
const BACKLOG = 30_000;

let stack: Stack;
let watcher: DeliveryWatcher;
/** The dispatchers' retry lane: the overflow lane's deliveries, and the parked ones. */
let retryLane: DeliveryWatcher;
let router: RunningService | undefined;

async function produce(topic: string, messages: IngestMessage[]): Promise<void> {
  for (let start = 0; start < messages.length; start += 2_000) {
    await stack.producer.send({
      topic,
      messages: messages.slice(start, start + 2_000).map((message) => ({ key: message.anonymousId, value: stack.codec.encode(topic, message) })),
    });
  }
}

// Counted as the watcher reads, not by scanning everything it has read at every record: that
// was quadratic in the backlog, held the test's event loop for seconds and got its reader
// thrown out of its group (which then read the topic again from the start).
let scanned = 0;
let bulk = 0;
const bulkSeen = (): number => {
  for (; scanned < retryLane.seen.length; scanned++) if (retryLane.seen[scanned]!.delivery.sourceId === 'bulk') bulk++;
  return bulk;
};

beforeAll(async () => {
  stack = await openStack(namespace);
  await writeConfig(stack, source('bulk'));
  await writeConfig(stack, source('quiet'));
  await writeConfig(stack, destination('hooks', ['bulk', 'quiet']));
  await writeConfig(stack, destination('down', ['tripped']));
  await writeConfig(stack, source('tripped'));
  watcher = new DeliveryWatcher(stack);
  retryLane = new DeliveryWatcher(stack, stack.topics.dueRetries);
  await Promise.all([watcher.start(), retryLane.start()]);
});

afterAll(async () => {
  await router?.stop();
  await watcher?.stop();
  await retryLane?.stop();
  await stack?.close();
});

describe('ingest lanes', () => {
  it('routes a main-lane record ahead of a backlog in the overflow lane, whose deliveries go to the retry lane', async () => {
    const backlog = Array.from({ length: BACKLOG }, (_, index) => trackMessage(`bulk-${index}`, { sourceId: 'bulk', anonymousId: `anon-${index % 50}` }));
    await produce(stack.topics.ingestOverflow, backlog);
    router = await startService('router', { env: { ...stackEnv(namespace), INSTANCE_ID: 'it-lanes' } });
    await retryLane.waitFor(() => bulkSeen() > 0, 30_000, 'the first overflow deliveries');

    await produce(stack.topics.ingest, [trackMessage('quiet-1', { sourceId: 'quiet' })]);
    await watcher.waitForKeys(['hooks/quiet/quiet-1'], 30_000);
    const routedBefore = bulkSeen();
    // One FIFO would route it after the whole backlog; the main lane waits at most for the
    // transaction in flight (ROUTER_MAX_BATCH records), so most of the backlog is still ahead.
    expect(BACKLOG - routedBefore).toBeGreaterThan(BACKLOG / 2);

    await retryLane.waitFor(() => bulkSeen() >= BACKLOG, 120_000, 'the whole overflow backlog');
    await Promise.all([watcher.settle(), retryLane.settle()]);
    expect(watcher.keys()).toEqual(['hooks/quiet/quiet-1']);
    expect(new Set(retryLane.keys()).size).toBe(BACKLOG);
    // Each delivery committed once, the main lane's on the first-attempt topic and the overflow
    // lane's on the retry lane: each topic read once, to its end (a watcher may have read parts
    // twice after a rejoin, which says nothing about what was written).
    expect(await readTopicToEnd(stack.kafka, stack.topics.deliveries, { timeoutMs: 60_000 })).toHaveLength(1);
    expect(await readTopicToEnd(stack.kafka, stack.topics.dueRetries, { timeoutMs: 60_000 })).toHaveLength(BACKLOG);
  }, 180_000);

  it('forwards a messageId written to both lanes once', async () => {
    const repeated = trackMessage('both-lanes', { sourceId: 'quiet' });
    await produce(stack.topics.ingestOverflow, [repeated]);
    await produce(stack.topics.ingest, [repeated]);
    await produce(stack.topics.ingest, [trackMessage('after-both', { sourceId: 'quiet' })]);
    await produce(stack.topics.ingestOverflow, [trackMessage('after-both-overflow', { sourceId: 'quiet' })]);
    await watcher.waitForKeys(['hooks/quiet/after-both'], 30_000);
    await retryLane.waitForKeys(['hooks/quiet/after-both-overflow'], 30_000);
    await Promise.all([watcher.settle(), retryLane.settle()]);
    expect([...watcher.keys(), ...retryLane.keys()].filter((key) => key === 'hooks/quiet/both-lanes')).toHaveLength(1);
  }, 60_000);

  it('defers the deliveries of a destination whose circuit is open at every dispatcher onto the ladder, parks those of a half-open or congested one on the retry lane, and routes them the first way once it recovers', async () => {
    const health = async (state: 'open' | 'half_open' | 'congested' | 'closed') => {
      const now = Date.now();
      const open = state === 'open';
      const tripped = open || state === 'half_open';
      const view: DestinationHealth = {
        destinationId: 'down', instanceId: 'dispatcher-1', state: state === 'congested' ? 'closed' : state, stateSince: now, openUntil: open ? now + 60_000 : null, openings: tripped ? 1 : 0,
        consecutiveFailures: tripped ? 5 : 0, windowRequests: 5, windowFailures: tripped ? 5 : 0, lastSuccessAt: null, lastFailureAt: now, lastError: 'HTTP 503',
        queuedFirst: 0, queuedRetries: 0, inFlight: state === 'congested' ? 64 : 0, congestedSince: state === 'congested' ? now - 2_000 : null, attempts: 5, deferrals: 0, updatedAt: now,
      };
      await stack.producer.send({ topic: stack.topics.destinationHealth, messages: [{ key: destinationHealthKey('down', 'dispatcher-1'), value: stack.codec.encode(stack.topics.destinationHealth, view) }] });
    };
    const parked = (reason?: string) => metricValue(router!.url, 'tributary_router_parked_total', { destination: 'down', ...(reason ? { reason } : {}) });
    const deferred = () => metricValue(router!.url, 'tributary_router_deferred_total', { destination: 'down' });
    let sent = 0;
    const sendUntil = (done: () => Promise<boolean>, what: string) =>
      eventually(async () => {
        await produce(stack.topics.ingest, [trackMessage(`tripped-${++sent}`, { sourceId: 'tripped' })]);
        return done();
      }, what);

    // Open for another minute at every dispatcher: deferred here, onto a tier, no dispatcher reads it.
    await health('open');
    await sendUntil(async () => (await deferred()) > 0, 'the router to defer for the open circuit');
    // The last message sent may still be on its way: read until the tiers hold what was counted.
    let tierRecords: Awaited<ReturnType<typeof readTopicToEnd>> = [];
    await eventually(async () => {
      tierRecords = [];
      for (const tier of ['10s', '1m']) tierRecords.push(...(await readTopicToEnd(stack.kafka, stack.topics.retry(tier), { timeoutMs: 20_000 })));
      return tierRecords.length === (await deferred());
    }, 'the deferred deliveries on the tier topics');
    expect(tierRecords.length).toBeGreaterThan(0);
    for (const { message } of tierRecords) {
      expect(message.key?.toString()).toMatch(/^down\/tripped\/tripped-/);
      const record = await stack.codec.decode<RetryRecord>('retry', message.value!);
      expect(record.delivery).toMatchObject({ destinationId: 'down', attempts: 0, lastError: 'deferred: circuit open' });
      expect(record.dueAt).toBeGreaterThanOrEqual(record.delivery.firstAttemptAt! + 10_000);
    }

    for (const state of ['half_open', 'congested'] as const) {
      await health(state);
      const reason = state === 'half_open' ? 'circuit_open' : 'congested';
      await sendUntil(async () => (await parked(reason)) > 0, `the router to read the ${state} destination`);
    }
    const parkedCount = await parked();
    // The counter moves once the routing transaction has committed, but the broker writes the
    // commit markers after that: the retry lane's watcher may read the last parked deliveries a
    // moment later, so wait for as many as were counted. (It reads the topic as it grows; a read
    // from the start would first go through the 30,000 of the overflow backlog.)
    const parkedSeen = () => new Set(retryLane.keys().filter((key) => key.startsWith('down/')));
    await retryLane.waitFor(() => parkedSeen().size >= parkedCount, 20_000, `the ${parkedCount} parked deliveries counted`);
    const parkedKeys = parkedSeen();
    // Both states parked at least one (each waited for its own counter), and every one counted is
    // there: the `every` below says nothing about an empty list.
    expect(parkedCount).toBeGreaterThanOrEqual(2);
    expect(parkedKeys.size).toBeGreaterThanOrEqual(parkedCount);
    expect([...parkedKeys].every((key) => key.startsWith('down/tripped/tripped-'))).toBe(true);

    await health('closed');
    // The router reads the health view and routes asynchronously: a message just sent is not
    // routed yet when the watcher has caught up with the topic. Wait a while for any message
    // sent since the recovery, sending another only if the last ones were still held back.
    const recoveredFrom = sent + 1;
    const routedFirstSinceRecovery = () => watcher.keys().some((key) => key.startsWith('down/tripped/tripped-') && Number(key.slice('down/tripped/tripped-'.length)) >= recoveredFrom);
    await eventually(async () => {
      await produce(stack.topics.ingest, [trackMessage(`tripped-${++sent}`, { sourceId: 'tripped' })]);
      await watcher.waitFor(routedFirstSinceRecovery, 2_000).catch(() => undefined);
      return routedFirstSinceRecovery();
    }, 'the router to read the recovered destination', 30_000);
    // Every message went exactly one way (the last ones sent may still be on their way).
    const accounted = async () => {
      await watcher.settle();
      return watcher.keys().filter((key) => key.startsWith('down/')).length + (await parked()) + (await deferred());
    };
    await eventually(async () => (await accounted()) >= sent, 'every message sent to be routed');
    expect(await accounted()).toBe(sent);
  }, 90_000);
});

describe('a source that amplifies', () => {
  it('does not hold back the main lane: routing transactions are bounded in the bytes they write, not only in records', async () => {
    // 600 records of 20 KB to five destinations, all there before the router starts: 60 MB of
    // deliveries. Bounded in records only, a fetch's worth (1 MB a partition) was one 30 MB
    // transaction, and a main-lane record waited for each such transaction in flight.
    const WIDE = 600;
    const wideStack = await openStack(uniqueNamespace('lanes-wide'));
    const firstLane = new DeliveryWatcher(wideStack);
    const wideLane = new DeliveryWatcher(wideStack, wideStack.topics.dueRetries);
    let wideRouter: RunningService | undefined;
    try {
      await writeConfig(wideStack, source('wide'));
      await writeConfig(wideStack, source('quiet'));
      await writeConfig(wideStack, destination('hooks', ['quiet']));
      for (let index = 0; index < 5; index++) await writeConfig(wideStack, destination(`wide-${index}`, ['wide']));
      await Promise.all([firstLane.start(), wideLane.start()]);
      const pad = JSON.stringify({ pad: 'x'.repeat(20_000) });
      const topic = wideStack.topics.ingestOverflow;
      // Small sends: a record batch per partition must stay under the broker's 1 MB.
      for (let start = 0; start < WIDE; start += 30) {
        const messages = Array.from({ length: 30 }, (_, index) => trackMessage(`wide-${start + index}`, { sourceId: 'wide', properties: pad }));
        await wideStack.producer.send({ topic, messages: messages.map((message) => ({ key: message.messageId, value: wideStack.codec.encode(topic, message) })) });
      }
      wideRouter = await startService('router', { env: { ...stackEnv(wideStack.topics.namespace), INSTANCE_ID: 'it-lanes-wide', ...(process.env.TEST_ROUTER_MAX_BATCH_BYTES ? { ROUTER_MAX_BATCH_BYTES: process.env.TEST_ROUTER_MAX_BATCH_BYTES } : {}) } });
      await wideLane.waitFor(() => wideLane.seen.length > 0, 60_000, 'the first wide deliveries');
      const quiet = trackMessage('quiet-wide', { sourceId: 'quiet' });
      await wideStack.producer.send({ topic: wideStack.topics.ingest, messages: [{ key: quiet.messageId, value: wideStack.codec.encode(wideStack.topics.ingest, quiet) }] });
      await firstLane.waitForKeys(['hooks/quiet/quiet-wide'], 60_000);
      const routedBefore = wideLane.seen.length;
      expect(WIDE * 5 - routedBefore).toBeGreaterThan((WIDE * 5) / 2);
      await wideLane.waitFor(() => new Set(wideLane.keys()).size >= WIDE * 5, 120_000, 'every wide delivery');
      // What each transaction wrote: under ROUTER_MAX_BATCH_BYTES (4 MiB) plus the record that
      // crossed it, so none in the buckets past 8 MiB.
      const transactions = await metricValue(wideRouter.url, 'tributary_router_transaction_bytes_count');
      const underEight = await metricValue(wideRouter.url, 'tributary_router_transaction_bytes_bucket', { le: '8388608' });
      expect(transactions).toBeGreaterThan(0);
      expect(transactions - underEight).toBe(0);
    } finally {
      await wideRouter?.stop();
      await Promise.all([firstLane.stop(), wideLane.stop()]);
      await wideStack.close();
    }
  }, 240_000);
});
