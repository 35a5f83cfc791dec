/**
 * A destination's circuit through its whole life against a real receiver and a real broker:
 * closed → open after a run of failures (deliveries deferred without a request) → half-open
 * when the cool-down ends (a probe is sent) → closed when the probe succeeds; and a
 * receiver's Retry-After, which sets the retry's tier and pauses the circuit for as long as
 * it asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { wasDeferred } from '@tributary/shared';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { startReceiver, type Behaviour, type Receiver } from './receivers.js';

const ladder = { delaysMs: [500, 8_000, 60_000], windowMs: 3_600_000 };
/**
 * The cool-down and the receiver's Retry-After pause: each must outlast what the test does
 * between the circuit opening (or pausing) and the deliveries it expects deferred — a metric
 * poll or two, a produce, a fetch, a commit and the collector — on a slow machine too.
 */
const CIRCUIT_OPEN_MS = 5_000;
const RETRY_AFTER_S = 6;

let pipeline: TestPipeline;
let dispatcher: RunningService;
let receiver: Receiver;
let flakyAnswer: number = 503;
let throttled: { status: number; headers: Record<string, string> } = { status: 429, headers: { 'retry-after': String(RETRY_AFTER_S) } };

const behaviour: Behaviour = ({ path }) => {
  if (path.startsWith('/flaky')) return flakyAnswer;
  if (path.startsWith('/throttled')) return throttled;
  return 200;
};

beforeAll(async () => {
  receiver = await startReceiver(behaviour);
  pipeline = new TestPipeline(uniqueNamespace('breaker'), ladder);
  await pipeline.start();
  dispatcher = await startService('dispatcher', {
    env: pipeline.env({ CIRCUIT_FAILURES: '3', CIRCUIT_OPEN: `${CIRCUIT_OPEN_MS}ms`, CIRCUIT_PROBES: '1', WEBHOOK_TIMEOUT: '2s' }),
  });
});

afterAll(async () => {
  await dispatcher?.stop();
  await pipeline?.stop();
  await receiver?.close();
});

const requestsTo = (prefix: string) => receiver.requests.filter((request) => request.path.startsWith(prefix));
const send = (destinationId: string, label: string, count = 1) =>
  pipeline.deliverMany(Array.from({ length: count }, (_, n) => ({ destinationId, body: { type: 'track', event: `${label}-${n}` } })));
const circuitState = () => metricValue(dispatcher.url, 'tributary_destination_circuit_state', { destination: 'flaky' });

describe('a destination’s circuit', () => {
  it('opens after a run of failures, defers without requests, probes after the cool-down and closes on success', async () => {
    await pipeline.putDestination(webhooksDestination('flaky', [{ url: receiver.url('/flaky') }]));

    // closed → open: three 503s in a row.
    for (let n = 0; n < 3; n++) {
      await send('flaky', `fail-${n}`);
      await eventually(() => requestsTo('/flaky').length === n + 1, `failure ${n + 1} attempted`);
    }
    await eventually(async () => (await circuitState()) === 2, 'the circuit open');
    const openBy = Date.now();

    // open: deliveries are deferred without a request.
    const whileOpen = await send('flaky', 'while-open', 5);
    await eventually(() => whileOpen.every((delivery) => pipeline.retriesFor(delivery.deliveryId).length === 1), 'deliveries deferred');
    expect(requestsTo('/flaky')).toHaveLength(3);
    for (const delivery of whileOpen) {
      const [record] = pipeline.retriesFor(delivery.deliveryId);
      expect(wasDeferred(record!.delivery)).toBe(true);
      expect(record!.delivery.attempts).toBe(0);
    }

    // open → half-open → closed: after the cool-down the next delivery is a probe; it succeeds.
    flakyAnswer = 200;
    await new Promise((resolve) => setTimeout(resolve, openBy + CIRCUIT_OPEN_MS + 100 - Date.now()));
    const [probe] = await send('flaky', 'probe');
    await eventually(() => requestsTo('/flaky').some((request) => request.body.equals(probe!.body)), 'the probe sent');
    await eventually(async () => (await circuitState()) === 0, 'the circuit closed');
    const after = await send('flaky', 'after', 5);
    await eventually(() => after.every((delivery) => requestsTo('/flaky').some((request) => request.body.equals(delivery.body))), 'deliveries after closing sent');

    const transitions = async (to: string) => metricValue(dispatcher.url, 'tributary_destination_circuit_transitions_total', { destination: 'flaky', to });
    expect(await transitions('open')).toBe(1);
    expect(await transitions('half_open')).toBe(1);
    expect(await transitions('closed')).toBe(1);

    // The published health went through the same states.
    const states = await eventually(() => {
      const seen = pipeline.health.filter(({ value }) => value?.destinationId === 'flaky').map(({ value }) => value!.state);
      return seen.includes('closed') && seen.includes('open') && seen;
    }, 'health records of the transitions');
    expect(states.indexOf('open')).toBeLessThan(states.lastIndexOf('closed'));
  });

  it('honours Retry-After: the retry waits on the tier that covers it, and the circuit pauses that long', async () => {
    await pipeline.putDestination(webhooksDestination('throttled', [{ url: receiver.url('/throttled') }]));
    const [first] = await send('throttled', 'throttled');
    const [record] = await eventually(() => {
      const records = pipeline.retriesFor(first!.deliveryId);
      return records.length > 0 && records;
    }, 'the retry record');
    // The pause began when the dispatcher had the answer, before its outcome was committed.
    const pausedBy = Date.now();
    // Retry-After: 6 (seconds) → the smallest tier of at least 6 s: 8s, not the ladder's first step (500ms).
    expect(record).toMatchObject({ tier: '8s', delivery: { attempts: 1, lastStatus: 429 } });
    const attempt = await eventually(() => pipeline.attemptsFor(first!.deliveryId)[0], 'the attempt record');
    expect(attempt).toMatchObject({ kind: 'attempt', outcome: 'retry', status: 429, tier: '8s' });
    expect(attempt.targets[0]).toMatchObject({ urlIndex: 0, status: 429, retryAfterMs: RETRY_AFTER_S * 1000, outcome: 'http_error', errorClass: 'http_status' });
    expect(attempt.targets[0]!.responseBody?.toString()).toBe('{"received":true}');

    // Within the pause, nothing more is sent to it.
    const paused = await send('throttled', 'paused', 3);
    await eventually(() => paused.every((delivery) => pipeline.retriesFor(delivery.deliveryId).length === 1), 'deliveries deferred during the pause');
    expect(requestsTo('/throttled')).toHaveLength(1);

    // After it, a probe goes out (and the destination, answering 200 now, is closed again).
    throttled = { status: 200, headers: {} };
    await new Promise((resolve) => setTimeout(resolve, pausedBy + RETRY_AFTER_S * 1000 + 100 - Date.now()));
    const [later] = await send('throttled', 'later');
    await eventually(() => requestsTo('/throttled').some((request) => request.body.equals(later!.body)), 'the delivery after the pause sent');
  });

  it('dead-letters a 410 Gone with its own reason', async () => {
    const receiverGone = await startReceiver(() => 410);
    await pipeline.putDestination(webhooksDestination('gone', [{ url: receiverGone.url('/') }]));
    try {
      const [delivery] = await send('gone', 'gone');
      const [letter] = await eventually(() => {
        const letters = pipeline.deadLettersFor(delivery!.deliveryId);
        return letters.length > 0 && letters;
      }, 'the dead letter');
      expect(letter).toMatchObject({ reason: 'gone', status: 410 });
    } finally {
      await receiverGone.close();
    }
  });
});
