/**
 * Isolation, functionally: destinations that fail fast (503 at once, connection refused) or
 * hang must not hold back a healthy one on the same topic. Their circuits open after a few
 * failures and from then on their deliveries are deferred to the retry ladder without a
 * request (no attempt counted, the window started), while every delivery to the healthy
 * destination goes through. (The figures under load come from `npm run bench -- --scenario
 * noisy-neighbour`.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import type { Delivery } from '@tributary/schemas';
import { wasDeferred } from '@tributary/shared';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { startDnsServer, type DnsServer } from './dns-server.js';
import { startReceiver, type Behaviour, type Receiver } from './receivers.js';

// The second step is longer than the first describe block's cool-down (CIRCUIT_OPEN), so a
// delivery deferred while a circuit is open stays on the 1s tier (the longest tier back before
// the circuit lets probes through) until it has waited a step.
const ladder = { delaysMs: [1000, 600_000], windowMs: 3_600_000 };

let pipeline: TestPipeline;
let dispatcher: RunningService;
let receiver: Receiver;
let refusedUrl: string;

beforeAll(async () => {
  receiver = await startReceiver();
  // A port nothing listens on: connection refused.
  const closed = await startReceiver();
  refusedUrl = closed.url('/refused');
  await closed.close();
  pipeline = new TestPipeline(uniqueNamespace('isol'), ladder);
  await pipeline.start();
  dispatcher = await startService('dispatcher', {
    env: pipeline.env({
      WEBHOOK_TIMEOUT: '1s',
      DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '2',
      CIRCUIT_FAILURES: '3',
      // Open for the whole of both tests however slow the machine: the second one needs the
      // circuit still open (not letting its delivery through as a probe).
      CIRCUIT_OPEN: '5m',
    }),
  });
});

afterAll(async () => {
  await dispatcher?.stop();
  await pipeline?.stop();
  await receiver?.close();
});

const requestsTo = (path: string) => receiver.requests.filter((request) => request.path === path).length;

/** When each of `deliveries` first reached `at`, once all have: their receipt times, in order. */
function arrivals(at: Receiver, deliveries: readonly Delivery[], what: string, timeoutMs: number): Promise<number[]> {
  const arrived = (delivery: Delivery) => at.requests.find((request) => request.body.equals(delivery.body));
  return eventually(() => deliveries.every((delivery) => arrived(delivery)) && deliveries.map((delivery) => arrived(delivery)!.at), what, timeoutMs);
}

/**
 * A receiver, a pipeline in a namespace of its own and a dispatcher with `settings`, started
 * before the describe block's tests and stopped after them.
 */
function ownDispatcher(prefix: string, settings: Record<string, string>, behaviour?: Behaviour): { pipeline: TestPipeline; dispatcher: RunningService; receiver: Receiver } {
  const own = {} as { pipeline: TestPipeline; dispatcher: RunningService; receiver: Receiver };
  beforeAll(async () => {
    own.receiver = await startReceiver(behaviour);
    own.pipeline = new TestPipeline(uniqueNamespace(prefix), ladder);
    await own.pipeline.start();
    own.dispatcher = await startService('dispatcher', { env: own.pipeline.env(settings) });
  });
  afterAll(async () => {
    // The receiver first: closing it ends the requests left hanging, so the dispatcher's drain
    // does not wait out their answer window.
    await own.receiver?.close();
    await own.dispatcher?.stop();
    await own.pipeline?.stop();
  });
  return own;
}

describe('failing destinations beside a healthy one', () => {
  it('opens the circuits of fast-failing and hanging destinations and defers their deliveries without requests', async () => {
    await pipeline.putDestination(webhooksDestination('fails-fast', [{ url: receiver.url('/status/503') }]));
    await pipeline.putDestination(webhooksDestination('refuses', [{ url: refusedUrl }]));
    await pipeline.putDestination(webhooksDestination('hangs', [{ url: receiver.url('/hang') }]));
    await pipeline.putDestination(webhooksDestination('healthy', [{ url: receiver.url('/ok') }]));
    const failing = ['fails-fast', 'refuses', 'hangs'];
    const deliveries = [];
    // Waves, so that later deliveries meet circuits the earlier ones opened.
    for (let wave = 0; wave < 5; wave++) {
      const items = Array.from({ length: 40 }, (_, index) => ({
        destinationId: index % 4 === 3 ? 'healthy' : failing[index % 4]!,
        body: { type: 'track', event: `isolation-${wave}-${index}` },
      }));
      deliveries.push(...(await pipeline.deliverMany(items)));
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const healthy = deliveries.filter((delivery) => delivery.destinationId === 'healthy');
    await eventually(
      () => healthy.every((delivery) => receiver.requests.some((request) => request.body.equals(delivery.body))),
      'every healthy delivery received',
    );

    for (const destinationId of failing) {
      const mine = deliveries.filter((delivery) => delivery.destinationId === destinationId);
      // Every delivery ends on the ladder: retried after an attempt, or deferred without one.
      await eventually(() => mine.every((delivery) => pipeline.retriesFor(delivery.deliveryId).length > 0), `${destinationId}: every delivery on the ladder`);
      const deferred = mine.flatMap((delivery) => pipeline.retriesFor(delivery.deliveryId)).filter((record) => wasDeferred(record.delivery));
      expect(deferred.length, destinationId).toBeGreaterThan(mine.length / 2);
      for (const record of deferred) {
        expect(record.tier).toBe('1s');
        expect(record.delivery.attempts).toBe(0);
        expect(record.delivery.firstAttemptAt).not.toBeNull();
      }
    }
    // Requests actually sent to the failing receivers: the circuit's threshold (and, for the
    // hanging one, the requests in flight when it opened), not one per delivery.
    expect(requestsTo('/status/503')).toBeLessThanOrEqual(6);
    expect(requestsTo('/hang')).toBeLessThanOrEqual(4);
    expect(await metricValue(dispatcher.url, 'tributary_dispatcher_deferred_total', { reason: 'circuit_open' })).toBeGreaterThan(100);
    for (const destinationId of failing) {
      expect(await metricValue(dispatcher.url, 'tributary_destination_circuit_state', { destination: destinationId }), destinationId).toBe(2);
    }
    expect(await metricValue(dispatcher.url, 'tributary_destination_circuit_state', { destination: 'healthy' })).toBe(0);
    expect(pipeline.deadLetters).toEqual([]);

    // The delivery log has the attempts that were made; a deferral that only moves a delivery
    // up the ladder is counted (above), not logged per delivery.
    const deferredOnly = deliveries.find(
      (delivery) => delivery.destinationId === 'fails-fast' && pipeline.retriesFor(delivery.deliveryId).every((record) => wasDeferred(record.delivery)),
    )!;
    const attempted = deliveries.find((delivery) => delivery.destinationId === 'fails-fast' && pipeline.retriesFor(delivery.deliveryId).some((r) => !wasDeferred(r.delivery)))!;
    await eventually(() => pipeline.attemptsFor(attempted.deliveryId).length > 0, 'the attempt in the attempt log');
    expect(pipeline.attemptsFor(attempted.deliveryId)[0]).toMatchObject({ kind: 'attempt', outcome: 'retry', status: 503, lane: 'first', attempt: 1 });
    expect(pipeline.attemptsFor(deferredOnly.deliveryId)).toEqual([]);
  });

  it('defers a delivery that comes back on the retry lane while its circuit is still open, further up the ladder', async () => {
    // A deferred delivery returns from the 1 s tier, as the retry-scheduler releases it: one step
    // waited, the next is the ladder's second (10 minutes).
    const [returning] = await pipeline.deliverMany(
      [{ destinationId: 'fails-fast', body: { type: 'track', event: 'returning' }, overrides: { firstAttemptAt: Date.now() - 1500, lastError: 'deferred: circuit open; last error: HTTP 503' } }],
      'retry',
    );
    const [record] = await eventually(() => {
      const records = pipeline.retriesFor(returning!.deliveryId);
      return records.length > 0 && records;
    }, 'the returning delivery deferred again');
    expect(record!.tier).toBe('10m');
    expect(record!.delivery).toMatchObject({ attempts: 0, lastError: 'deferred: circuit open; last error: HTTP 503' });
  });
});

describe('a slow destination with a deep backlog beside a small one', () => {
  // Answers /slow in 2 s — slow, but within the answer window: its circuit stays closed.
  const hog = ownDispatcher('hog', { DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '2', DELIVERY_MAX_BUFFERED: '20', DELIVERY_MAX_QUEUE_WAIT: '500ms' }, ({ path }) => (path.startsWith('/slow') ? { status: 200, afterMs: 2_000 } : 200));

  it('defers the surplus of the destination hogging the lane, so the small one keeps flowing', async () => {
    await hog.pipeline.putDestination(webhooksDestination('slow', [{ url: hog.receiver.url('/slow') }]));
    await hog.pipeline.putDestination(webhooksDestination('small', [{ url: hog.receiver.url('/small') }]));
    const slow = await hog.pipeline.deliverMany(Array.from({ length: 60 }, (_, n) => ({ destinationId: 'slow', body: { event: `slow ${n}` } })));
    const small: Delivery[] = [];
    for (let wave = 0; wave < 4; wave++) {
      await new Promise((resolve) => setTimeout(resolve, 700));
      small.push(...(await hog.pipeline.deliverMany(Array.from({ length: 3 }, (_, n) => ({ destinationId: 'small', body: { event: `small ${wave}-${n}` } })))));
    }
    const smallArrivals = await arrivals(hog.receiver, small, 'every small delivery', 15_000);
    // Had the lane waited for the slow destination (two requests of 2 s at a time for 60
    // deliveries: a minute), the small one's deliveries would have waited with it.
    expect(Math.max(...smallArrivals) - Math.min(...smallArrivals)).toBeLessThan(8_000);
    const deferred = await eventually(() => {
      const records = slow.flatMap((delivery) => hog.pipeline.retriesFor(delivery.deliveryId)).filter((record) => wasDeferred(record.delivery));
      return records.length > 0 && records;
    }, 'the slow surplus deferred');
    expect(deferred[0]!.delivery.lastError).toMatch(/^deferred: destination backlog full/);
    expect(await metricValue(hog.dispatcher.url, 'tributary_dispatcher_deferred_total', { reason: 'backlog_full' })).toBeGreaterThanOrEqual(deferred.length);
    expect(await metricValue(hog.dispatcher.url, 'tributary_destination_circuit_state', { destination: 'slow' })).toBe(0);
    // Both its slots taken and deliveries waiting: published as congested (saturated, not
    // stalled — its attempts finish), so the router sends its new deliveries the retry way.
    const congested = await eventually(
      () => hog.pipeline.health.find(({ value }) => value?.destinationId === 'slow' && value.congestedSince !== null)?.value,
      'a health record saying the slow destination is congested',
      10_000,
    );
    expect(congested).toMatchObject({ state: 'closed', inFlight: 2 });
  });
});

describe('a hanging destination that fills the lane before its circuit can open', () => {
  // No answer comes for 30 s, so no failure opens the circuit before then.
  const hang = ownDispatcher('stall', { WEBHOOK_TIMEOUT: '30s', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '4', DELIVERY_MAX_BUFFERED: '20', DELIVERY_MAX_QUEUE_WAIT: '500ms' });

  it('defers the backlog it holds in the full lane, so a small destination behind it is delivered within seconds', async () => {
    await hang.pipeline.putDestination(webhooksDestination('hangs', [{ url: hang.receiver.url('/hang') }]));
    await hang.pipeline.putDestination(webhooksDestination('small', [{ url: hang.receiver.url('/small') }]));
    await hang.pipeline.deliverMany(Array.from({ length: 60 }, (_, n) => ({ destinationId: 'hangs', body: { event: `hang ${n}` } })));
    const sentAt = Date.now();
    const small = await hang.pipeline.deliverMany(Array.from({ length: 3 }, (_, n) => ({ destinationId: 'small', body: { event: `small ${n}` } })));
    const arrivedAt = await arrivals(hang.receiver, small, 'every small delivery', 25_000);
    // Before, nothing new was read from a full lane and so nothing was judged: the small
    // deliveries waited for the hanging requests' 30 s timeout. Now within about a second.
    expect(Math.max(...arrivedAt) - sentAt).toBeLessThan(15_000);
    expect(await metricValue(hang.dispatcher.url, 'tributary_dispatcher_deferred_total', { reason: 'backlog_full' })).toBeGreaterThan(0);
    expect(hang.receiver.requests.filter((request) => request.path === '/hang').length).toBeLessThanOrEqual(4);
    // The congestion (attempts stalled) is published long before the timeouts could open the circuit, so the router
    // sends the destination's new deliveries through the retry lane.
    const stalled = await eventually(
      () => hang.pipeline.health.find(({ value }) => value?.destinationId === 'hangs' && value.congestedSince !== null)?.value,
      'a health record saying the hanging destination is congested',
      10_000,
    );
    // Still closed: published before the first 30 s timeout.
    expect(stalled).toMatchObject({ state: 'closed', inFlight: 4 });
  });
});

describe('destinations whose name server never answers beside one whose does', () => {
  let dnsPipeline: TestPipeline;
  let dnsDispatcher: RunningService;
  let dnsReceiver: Receiver;
  let dns: DnsServer;

  beforeAll(async () => {
    dns = await startDnsServer((name) => (name.endsWith('.hang.test') ? 'hang' : name === 'hooks.good.test' ? { addresses: ['127.0.0.1'] } : 'nxdomain'));
    dnsReceiver = await startReceiver();
    dnsPipeline = new TestPipeline(uniqueNamespace('dns'), ladder);
    await dnsPipeline.start();
    // The dead names' lookups give up after two tries of 2 s (a quarter of the 8 s window):
    // until then nothing but the resolver stands between them and everyone else's connections.
    dnsDispatcher = await startService('dispatcher', { env: dnsPipeline.env({ DELIVERY_DNS_SERVERS: dns.address, WEBHOOK_TIMEOUT: '8s' }) });
  });

  afterAll(async () => {
    await dnsDispatcher?.stop();
    await dnsPipeline?.stop();
    await dnsReceiver?.close();
    await dns?.close();
  });

  it('delivers to the named host while the dead names wait out their lookups, asking once per name', async () => {
    const port = new URL(dnsReceiver.url()).port;
    // More dead names than libuv has threads (4): through getaddrinfo, they would hold every
    // thread for the resolver's timeout and the healthy name's lookup would queue behind them.
    const dead = Array.from({ length: 8 }, (_, index) => `dead-${index}`);
    for (const [index, destinationId] of dead.entries()) {
      await dnsPipeline.putDestination(webhooksDestination(destinationId, [{ url: `http://hooks-${index}.hang.test:${port}/dead` }]));
    }
    await dnsPipeline.putDestination(webhooksDestination('named', [{ url: `http://hooks.good.test:${port}/named` }]));
    const doomed = await dnsPipeline.deliverMany(Array.from({ length: 160 }, (_, n) => ({ destinationId: dead[n % dead.length]!, body: { event: `dead ${n}` } })));
    const named = await dnsPipeline.deliverMany(Array.from({ length: 5 }, (_, n) => ({ destinationId: 'named', body: { event: `named ${n}` } })));
    const arrived = (body: Buffer) => dnsReceiver.requests.some((request) => request.path === '/named' && request.body.equals(body));
    await eventually(() => named.every((delivery) => arrived(delivery.body)), 'every delivery to the named host', 15_000);
    // Not one dead-name delivery has an outcome yet: the named host was served while they waited.
    expect(doomed.filter((delivery) => dnsPipeline.retriesFor(delivery.deliveryId).length > 0)).toEqual([]);

    await eventually(() => doomed.every((delivery) => dnsPipeline.retriesFor(delivery.deliveryId).length > 0), 'every dead-name delivery on the ladder', 30_000);
    const attempted = doomed.flatMap((delivery) => dnsPipeline.retriesFor(delivery.deliveryId)).filter((record) => !wasDeferred(record.delivery));
    expect(attempted.length).toBeGreaterThan(0);
    for (const record of attempted) expect(record.delivery.lastError).toMatch(/ETIMEOUT|timeout/);
    // One query per family for each name, shared by every connection waiting on it (c-ares
    // retries once: two tries), not one per connection.
    for (let index = 0; index < dead.length; index++) expect(dns.queries.get(`hooks-${index}.hang.test`) ?? 0).toBeLessThanOrEqual(8);
    expect(dnsReceiver.requests.filter((request) => request.path === '/dead')).toEqual([]);
    expect(await metricValue(dnsDispatcher.url, 'tributary_dispatcher_host_lookups_total', { answer: 'failed' })).toBeGreaterThanOrEqual(dead.length);
    expect(await metricValue(dnsDispatcher.url, 'tributary_dispatcher_host_lookups_total', { answer: 'dns' })).toBeLessThanOrEqual(dead.length * 4 + 4);
  });
});

describe('hanging destinations that together take every request slot', () => {
  // Three hanging destinations of four slots each, eight slots in all: between them they take
  // every one as soon as their deliveries are read, and no answer frees one for 30 s.
  const crowd = ownDispatcher('crowd', { WEBHOOK_TIMEOUT: '30s', DELIVERY_MAX_IN_FLIGHT: '8', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '4', DELIVERY_MAX_QUEUE_WAIT: '500ms' });

  it('lets a healthy destination past attempts that have stalled, so it is delivered within seconds, not after the timeout', async () => {
    const hanging = ['hangs-a', 'hangs-b', 'hangs-c'];
    for (const destinationId of hanging) await crowd.pipeline.putDestination(webhooksDestination(destinationId, [{ url: crowd.receiver.url(`/hang/${destinationId}`) }]));
    await crowd.pipeline.putDestination(webhooksDestination('healthy', [{ url: crowd.receiver.url('/healthy') }]));
    await crowd.pipeline.deliverMany(hanging.flatMap((destinationId) => Array.from({ length: 6 }, (_, n) => ({ destinationId, body: { event: `${destinationId} ${n}` } }))));
    await eventually(() => crowd.receiver.requests.filter((request) => request.path.startsWith('/hang/')).length >= 8, 'every slot taken by a hanging request');
    const sentAt = Date.now();
    const healthy = await crowd.pipeline.deliverMany(Array.from({ length: 3 }, (_, n) => ({ destinationId: 'healthy', body: { event: `healthy ${n}` } })));
    const arrivedAt = await arrivals(crowd.receiver, healthy, 'every healthy delivery', 25_000);
    // Before, the healthy deliveries waited for a slot until the first hanging requests timed out (30 s).
    expect(Math.max(...arrivedAt) - sentAt).toBeLessThan(10_000);
    // The stalled destinations took no slot beyond the ones they held.
    expect(crowd.receiver.requests.filter((request) => request.path.startsWith('/hang/')).length).toBeLessThanOrEqual(12);
  });
});

describe('hanging destinations that together fill the lane, none of them holding half of it', () => {
  const fill = ownDispatcher('fill', { WEBHOOK_TIMEOUT: '30s', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '2', DELIVERY_MAX_BUFFERED: '20', DELIVERY_MAX_QUEUE_WAIT: '500ms' });

  it('defers the stalled ones’ backlogs, so a small destination behind them is delivered within seconds', async () => {
    const hanging = ['hangs-a', 'hangs-b', 'hangs-c', 'hangs-d', 'hangs-e', 'hangs-f', 'hangs-g', 'hangs-h'];
    for (const destinationId of hanging) await fill.pipeline.putDestination(webhooksDestination(destinationId, [{ url: fill.receiver.url(`/hang/${destinationId}`) }]));
    await fill.pipeline.putDestination(webhooksDestination('small', [{ url: fill.receiver.url('/small') }]));
    await fill.pipeline.deliverMany(hanging.flatMap((destinationId) => Array.from({ length: 15 }, (_, n) => ({ destinationId, body: { event: `${destinationId} ${n}` } }))));
    const sentAt = Date.now();
    const small = await fill.pipeline.deliverMany(Array.from({ length: 3 }, (_, n) => ({ destinationId: 'small', body: { event: `small ${n}` } })));
    const arrivedAt = await arrivals(fill.receiver, small, 'every small delivery', 30_000);
    // Each holds an eighth of the lane, under the share that marks a single hog; before, the
    // small deliveries waited for the circuits to open: 90 s here (two requests of 30 s at a
    // time per destination), 30 s with a 10 s answer window. Now about 2.5 s.
    expect(Math.max(...arrivedAt) - sentAt).toBeLessThan(15_000);
    expect(await metricValue(fill.dispatcher.url, 'tributary_dispatcher_deferred_total', { reason: 'backlog_full' })).toBeGreaterThan(0);
  });
});
