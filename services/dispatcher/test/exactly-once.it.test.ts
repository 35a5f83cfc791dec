/**
 * Exactly-once towards Kafka: a dispatcher killed (SIGKILL) after writing retry records and
 * before committing its offsets leaves exactly one retry chain per delivery. The records of
 * the killed process's transaction were written to the broker but never committed; the next
 * process, under the same instance id, fences it (the broker aborts that transaction), reads
 * the deliveries again from the committed offsets and writes their retry records once.
 *
 * DELIVERY_TEST_COMMIT_DELAY (test-only fault injection) holds the transaction open between
 * sending its records and committing, so the kill lands there every time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { startReceiver, type Receiver } from './receivers.js';

const ladder = { delaysMs: [60_000], windowMs: 3_600_000 };
const INSTANCE_ID = 'dispatcher-crash-test';

let committed: TestPipeline;
let uncommitted: TestPipeline;
let receiver: Receiver;
const running: RunningService[] = [];

beforeAll(async () => {
  receiver = await startReceiver(() => 503);
  const namespace = uniqueNamespace('eos');
  committed = new TestPipeline(namespace, ladder);
  await committed.start();
  // A second view of the same topics that also sees records of transactions never committed.
  uncommitted = new TestPipeline(namespace, ladder);
  await uncommitted.start({ readUncommitted: true });
  // The circuit never opens here (neither rule: failures in a row, failure ratio), so every
  // delivery gets its attempt and its attempt record.
  await committed.putDestination(webhooksDestination('down', [{ url: receiver.url('/down') }]));
});

afterAll(async () => {
  for (const service of running) await service.kill();
  await committed?.stop();
  await uncommitted?.stop();
  await receiver?.close();
});

async function startDispatcher(extra: Record<string, string> = {}): Promise<RunningService> {
  const service = await startService('dispatcher', { env: committed.env({ INSTANCE_ID, CIRCUIT_FAILURES: '1000000', CIRCUIT_MIN_REQUESTS: '1000000', ...extra }) });
  running.push(service);
  return service;
}

describe('a dispatcher killed with its outcome transaction open', () => {
  it('leaves exactly one retry chain per delivery', { timeout: 120_000 }, async () => {
    const doomed = await startDispatcher({ DELIVERY_TEST_COMMIT_DELAY: '60s' });
    const deliveries = await committed.deliverMany(Array.from({ length: 30 }, (_, n) => ({ destinationId: 'down', body: { type: 'track', event: `crash ${n}` } })));
    // Retry records are on the broker, in a transaction not yet committed (the first
    // transaction takes what had settled when it began; it stays open for a minute).
    const written = await eventually(() => {
      const seen = deliveries.filter((delivery) => uncommitted.retriesFor(delivery.deliveryId).length === 1);
      return seen.length > 0 && seen;
    }, 'retry records written, uncommitted', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deliveries.every((delivery) => committed.retriesFor(delivery.deliveryId).length === 0)).toBe(true);
    await doomed.kill();

    await startDispatcher();
    // The crashed member holds its partitions until its session times out; then every
    // delivery is attempted again and its retry record committed.
    await eventually(() => deliveries.every((delivery) => committed.retriesFor(delivery.deliveryId).length >= 1), 'retry records committed', 90_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const chains = deliveries.map((delivery) => committed.retriesFor(delivery.deliveryId).length);
    expect(chains).toEqual(deliveries.map(() => 1));
    // The killed process's records exist on the broker too, aborted: read_uncommitted sees two.
    expect(written.every((delivery) => uncommitted.retriesFor(delivery.deliveryId).length === 2)).toBe(true);
    // And the delivery log has one committed attempt record per attempt that counted.
    expect(deliveries.every((delivery) => committed.attemptsFor(delivery.deliveryId).length === 1)).toBe(true);
  });
});
