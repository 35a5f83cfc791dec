/**
 * The dispatcher as a process against the real broker and registry, delivering to real
 * HTTP and HTTPS receivers started here. Private networks are allowed (the receivers are
 * on 127.0.0.1); the SSRF guard's default is covered in ssrf.it.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, type RunningService, startService, uniqueNamespace } from '@tributary/test/harness';
import type { Delivery } from '@tributary/schemas';
import { pythonHmacSha1 } from './python-hmac.js';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { makeCertificates, startHttpsReceiver, startReceiver, type Receiver, type TestCertificates } from './receivers.js';

const ladder = { delaysMs: [1000, 2000], windowMs: 60_000 };
const WEBHOOK_TIMEOUT_MS = 1000;

let pipeline: TestPipeline;
let dispatcher: RunningService;
let receiver: Receiver;
let certificates: TestCertificates;
let settledSoFar = 0;

function requestsFor(target: Receiver, delivery: Delivery) {
  return target.requests.filter((request) => request.body.equals(delivery.body));
}

/** Waits until the dispatcher has settled `count` more deliveries (delivered, retried, dead or deferred). */
async function settled(count: number): Promise<void> {
  settledSoFar += count;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const total = await metricValue(dispatcher.url, 'tributary_dispatcher_deliveries_total');
    if (total >= settledSoFar) return;
    if (Date.now() > deadline) throw new Error(`dispatcher settled ${total} deliveries, expected ${settledSoFar}; see ${dispatcher.logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let probes = 0;

/**
 * Returns once the dispatcher's config view holds everything written so far: a probe
 * destination written last (the config topic has one partition, so it is applied last)
 * has received a delivery.
 */
async function configApplied(): Promise<void> {
  const id = `probe-${++probes}`;
  await pipeline.putDestination(webhooksDestination(id, [{ url: receiver.url(`/${id}`) }]));
  await pipeline.deliver(id, { type: 'track', event: id });
  await settled(1);
  expect(receiver.requests.some((request) => request.path === `/${id}`)).toBe(true);
}

beforeAll(async () => {
  certificates = makeCertificates();
  receiver = await startReceiver();
  pipeline = new TestPipeline(uniqueNamespace('disp'), ladder);
  await pipeline.start();
  dispatcher = await startService('dispatcher', {
    env: pipeline.env({
      WEBHOOK_TIMEOUT: `${WEBHOOK_TIMEOUT_MS}ms`,
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      // Trusts the test CA only: the self-signed certificate must still be refused.
      NODE_EXTRA_CA_CERTS: certificates.caFile,
    }),
  });
});

afterAll(async () => {
  await dispatcher?.stop();
  await pipeline?.stop();
  await receiver?.close();
  certificates?.remove();
});

describe('X-Signature', () => {
  const secret = 'shared-sëcret-🔑';
  const bodies = [
    { type: 'track', event: 'Zoë bought a 🚀', properties: { city: 'Zürich', 名前: '测试', mixed: 'ÅÄÖ åäö ß ﬁ 👩‍💻' } },
    { type: 'track', text: 'quote " backslash \\ slash / newline \n tab \t nul \u0000 bell \u0007 separators \u2028\u2029', html: '<script>&amp;</script>' },
    { type: 'identify', traits: { a: { b: { c: [1, { d: [true, null, { e: 'deep', f: [[[]]], g: {} }] }] } } } },
    { type: 'track', properties: { big: 12345678901234567890, maxSafe: Number.MAX_SAFE_INTEGER, unsafe: 9007199254740993, max: Number.MAX_VALUE, tiny: 5e-324, exp: 1e21, neg: -0.000001, zero: -0 } },
  ];

  it("is verified by Python's hmac over the raw body and over JSON.stringify(JSON.parse(body))", async () => {
    const target = await startReceiver();
    try {
      await pipeline.putDestination(webhooksDestination('signed', [{ url: target.url('/signed') }], { sharedSecret: secret }));
      const deliveries = await pipeline.deliverMany(bodies.map((body) => ({ destinationId: 'signed', body })));
      await settled(deliveries.length);
      expect(target.requests).toHaveLength(bodies.length);
      for (const delivery of deliveries) {
        const [request] = requestsFor(target, delivery);
        expect(request, `request for ${delivery.deliveryId}`).toBeDefined();
        const header = request!.headers['x-signature'];
        expect(header).toMatch(/^[0-9a-f]{40}$/);
        // The bytes on the wire are exactly the delivery's body…
        expect(request!.body.equals(delivery.body)).toBe(true);
        // …the signature over them is what Python computes…
        expect(pythonHmacSha1(secret, request!.body)).toBe(header);
        // …and a receiver that re-serialises the parsed body gets the same digest.
        const reserialised = JSON.stringify(JSON.parse(request!.body.toString('utf8')));
        expect(pythonHmacSha1(secret, reserialised)).toBe(header);
      }
    } finally {
      await target.close();
    }
  });
});

describe('request shape', () => {
  it('sends static headers, User-Agent and JSON content type, and no X-Signature without a secret', async () => {
    await pipeline.putDestination(
      webhooksDestination('plain', [
        { url: receiver.url('/plain-a'), headers: { 'X-Team': 'growth', Authorization: 'Bearer abc' } },
        { url: receiver.url('/plain-b'), headers: { 'X-Other': 'only-b' } },
      ]),
    );
    const delivery = await pipeline.deliver('plain', { type: 'track', event: 'Plain' });
    await settled(1);
    const requests = requestsFor(receiver, delivery);
    expect(requests.map((request) => request.path).sort()).toEqual(['/plain-a', '/plain-b']);
    for (const request of requests) {
      expect(request.method).toBe('POST');
      expect(request.headers['user-agent']).toBe('Tributary/1.0');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers).not.toHaveProperty('x-signature');
      expect(request.headers).not.toHaveProperty('webhook-signature');
    }
    const a = requests.find((request) => request.path === '/plain-a')!;
    const b = requests.find((request) => request.path === '/plain-b')!;
    expect(a.headers['x-team']).toBe('growth');
    expect(a.headers.authorization).toBe('Bearer abc');
    expect(b.headers['x-other']).toBe('only-b');
    expect(b.headers).not.toHaveProperty('x-team');
  });

  it('adds Standard Webhooks headers that the standardwebhooks package verifies, alongside X-Signature', async () => {
    const standardSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    await pipeline.putDestination(
      webhooksDestination('standard', [{ url: receiver.url('/standard') }], { sharedSecret: 'x-secret', standardWebhooksSecret: standardSecret }),
    );
    const body = { type: 'track', event: 'Standard ✓', properties: { n: 1 } };
    const delivery = await pipeline.deliver('standard', body);
    await settled(1);
    const [request] = requestsFor(receiver, delivery);
    expect(request!.headers['webhook-id']).toBe(delivery.deliveryId);
    const headers = Object.fromEntries(Object.entries(request!.headers).map(([name, value]) => [name, String(value)]));
    expect(new Webhook(standardSecret).verify(request!.body, headers)).toEqual(body);
    expect(pythonHmacSha1('x-secret', request!.body)).toBe(request!.headers['x-signature']);
    expect(() => new Webhook('whsec_' + Buffer.from('another key').toString('base64')).verify(request!.body, headers)).toThrow();
  });
});

describe('several URLs', () => {
  it('one 2xx among five URLs processes the message: no retry record', async () => {
    const closed = await startReceiver();
    const closedUrl = closed.url('/gone');
    await closed.close();
    await pipeline.putDestination(
      webhooksDestination('five-one-ok', [
        { url: receiver.url('/status/500') },
        { url: receiver.url('/status/404') },
        { url: closedUrl },
        { url: receiver.url('/hang') },
        { url: receiver.url('/status/200') },
      ]),
    );
    const delivery = await pipeline.deliver('five-one-ok', { type: 'track', event: 'Five, one ok' });
    await settled(1);
    // Every URL was posted to at once; the slower ones may still be arriving.
    const paths = await eventually(() => {
      const seen = requestsFor(receiver, delivery).map((request) => request.path).sort();
      return seen.length === 4 && seen;
    }, 'a request at each reachable URL');
    expect(paths).toEqual(['/hang', '/status/200', '/status/404', '/status/500']);
    expect(pipeline.retriesFor(delivery.deliveryId)).toEqual([]);
    expect(pipeline.deadLettersFor(delivery.deliveryId)).toEqual([]);
  });

  it('the first 2xx settles the delivery without waiting for a hanging URL', async () => {
    await pipeline.putDestination(webhooksDestination('one-hangs', [{ url: receiver.url('/hang') }, { url: receiver.url('/status/200') }]));
    const delivery = await pipeline.deliver('one-hangs', { type: 'track', event: 'One hangs' });
    await settled(1);
    // The attempt's own duration, as its attempt record has it: well under the timeout the
    // hanging URL runs into, because the 200 settled it.
    const attempt = await eventually(() => pipeline.attemptsFor(delivery.deliveryId)[0], 'the attempt record');
    expect(attempt).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(attempt.durationMs).toBeLessThan(WEBHOOK_TIMEOUT_MS);
    expect(pipeline.retriesFor(delivery.deliveryId)).toEqual([]);
  });

  it('five URLs all answering 500 give exactly one retry record', async () => {
    const urls = [1, 2, 3, 4, 5].map((n) => ({ url: receiver.url(`/status/500?n=${n}`) }));
    await pipeline.putDestination(webhooksDestination('five-all-500', urls));
    const delivery = await pipeline.deliver('five-all-500', { type: 'track', event: 'Five, all fail' });
    await settled(1);
    expect(requestsFor(receiver, delivery)).toHaveLength(5);
    const retries = await eventually(() => pipeline.retriesFor(delivery.deliveryId).length > 0 && pipeline.retriesFor(delivery.deliveryId), 'the retry record');
    expect(retries).toHaveLength(1);
    const [retry] = retries;
    expect(retry!.tier).toBe('1s');
    expect(retry!.delivery).toMatchObject({ attempts: 1, lastStatus: 500 });
    expect(retry!.delivery.firstAttemptAt).toBeGreaterThanOrEqual(delivery.routedAt);
    expect(retry!.dueAt - retry!.delivery.firstAttemptAt!).toBeGreaterThanOrEqual(1000);
    expect(retry!.delivery.lastError).toContain('HTTP 500');
    expect(retry!.delivery.body.equals(delivery.body)).toBe(true);
    const collected = pipeline.retries.find(({ value }) => value.delivery.deliveryId === delivery.deliveryId)!;
    expect(collected.topic).toBe(pipeline.topics.retry('1s'));
    expect(collected.key).toBe(delivery.deliveryId);
    expect(pipeline.deadLettersFor(delivery.deliveryId)).toEqual([]);
  });
});

describe('failures', () => {
  it('404 is a dead letter with its status, and nothing is retried; a redirect is not followed', async () => {
    await pipeline.putDestination(webhooksDestination('not-found', [{ url: receiver.url('/status/404') }]));
    await pipeline.putDestination(webhooksDestination('moved', [{ url: receiver.url('/status/302') }]));
    const notFound = await pipeline.deliver('not-found', { type: 'track', event: '404' });
    const moved = await pipeline.deliver('moved', { type: 'track', event: '302' });
    await settled(2);
    const [dead] = await eventually(() => pipeline.deadLettersFor(notFound.deliveryId).length > 0 && pipeline.deadLettersFor(notFound.deliveryId), '404 dead letter');
    expect(dead).toMatchObject({ reason: 'http_status', status: 404, delivery: { attempts: 1, lastStatus: 404 } });
    expect(dead!.error).toContain('HTTP 404');
    expect(pipeline.retriesFor(notFound.deliveryId)).toEqual([]);
    const [redirect] = await eventually(() => pipeline.deadLettersFor(moved.deliveryId).length > 0 && pipeline.deadLettersFor(moved.deliveryId), '302 dead letter');
    expect(redirect).toMatchObject({ reason: 'redirect', status: 302 });
    expect(receiver.requests.filter((request) => request.path === '/elsewhere')).toEqual([]);
  });

  it('a destination answering 401 to everything: its first failures logged one by one, the rest counted in a line', async () => {
    const FAILURES = 40;
    await pipeline.putDestination(webhooksDestination('unauthorized', [{ url: receiver.url('/status/401') }]));
    await pipeline.deliverMany(Array.from({ length: FAILURES }, (_, index) => ({ destinationId: 'unauthorized', body: { type: 'track', event: `401-${index}` } })));
    await settled(FAILURES);
    // The count comes at the end of the dispatcher's 10 s interval; the deliveries may straddle two.
    const lines = await eventually(async () => {
      const logged = (await readFile(dispatcher.logFile, 'utf8'))
        .split('\n')
        .filter((line) => line.includes('"destinationId":"unauthorized"'))
        .map((line) => JSON.parse(line) as { msg: string; level: string; count?: number; notLogged?: number });
      const oneByOne = logged.filter((line) => line.msg === 'delivery dead-lettered' && line.level === 'info');
      const counted = logged.filter((line) => line.notLogged !== undefined);
      return oneByOne.length + counted.reduce((sum, line) => sum + line.notLogged!, 0) === FAILURES && { oneByOne, counted };
    }, 'every failure logged or counted', 30_000);
    expect(lines.counted.length).toBeGreaterThan(0);
    expect(lines.oneByOne.length).toBeLessThanOrEqual(10 * lines.counted.length + 10);
    for (const line of lines.counted) expect(line.count! - line.notLogged!).toBeLessThanOrEqual(10);
  }, 60_000);

  it('no answer within WEBHOOK_TIMEOUT is a timeout, retried', async () => {
    await pipeline.putDestination(webhooksDestination('hangs', [{ url: receiver.url('/hang') }]));
    const delivery = await pipeline.deliver('hangs', { type: 'track', event: 'Hang' });
    await settled(1);
    const [retry] = await eventually(() => pipeline.retriesFor(delivery.deliveryId).length > 0 && pipeline.retriesFor(delivery.deliveryId), 'retry record');
    expect(retry!.delivery.lastError).toMatch(/timeout/);
    expect(retry!.delivery.lastStatus).toBeNull();
    const [request] = requestsFor(receiver, delivery);
    expect(request).toBeDefined();
    expect(pipeline.deadLettersFor(delivery.deliveryId)).toEqual([]);
  });

  it('HTTPS with a self-signed certificate: no request reaches the receiver, dead letter with reason tls', async () => {
    const selfSigned = await startHttpsReceiver(certificates.selfSigned);
    const trusted = await startHttpsReceiver(certificates.caSigned);
    try {
      await pipeline.putDestination(webhooksDestination('self-signed', [{ url: selfSigned.url('/tls') }]));
      await pipeline.putDestination(webhooksDestination('trusted-tls', [{ url: trusted.url('/tls') }], { sharedSecret: 's' }));
      const refused = await pipeline.deliver('self-signed', { type: 'track', event: 'TLS' });
      const accepted = await pipeline.deliver('trusted-tls', { type: 'track', event: 'TLS ok' });
      await settled(2);
      const [dead] = await eventually(() => pipeline.deadLettersFor(refused.deliveryId).length > 0 && pipeline.deadLettersFor(refused.deliveryId), 'tls dead letter');
      expect(dead).toMatchObject({ reason: 'tls', status: null });
      expect(dead!.error).toMatch(/self-signed|SELF_SIGNED/i);
      expect(selfSigned.requests).toEqual([]);
      expect(selfSigned.tlsErrors).toBeGreaterThan(0);
      expect(pipeline.retriesFor(refused.deliveryId)).toEqual([]);
      // A certificate the process trusts is fine: TLS itself works.
      expect(trusted.requests).toHaveLength(1);
      expect(trusted.requests[0]!.body.equals(accepted.body)).toBe(true);
    } finally {
      await selfSigned.close();
      await trusted.close();
    }
  });
});

describe('config at attempt time', () => {
  it('dead-letters deliveries of a disabled or deleted destination without sending', async () => {
    await pipeline.putDestination({ ...webhooksDestination('disabled', [{ url: receiver.url('/disabled') }]), enabled: false });
    await pipeline.putDestination(webhooksDestination('deleted', [{ url: receiver.url('/deleted') }]));
    await pipeline.deleteDestination('deleted');
    // A delivery read before the dispatcher has seen the deletion would (rightly) still be
    // sent; this test is about deliveries that arrive after it.
    await configApplied();
    const toDisabled = await pipeline.deliver('disabled', { type: 'track', event: 'disabled' });
    const toDeleted = await pipeline.deliver('deleted', { type: 'track', event: 'deleted' });
    await settled(2);
    expect(await eventually(() => pipeline.deadLettersFor(toDisabled.deliveryId)[0], 'disabled')).toMatchObject({ reason: 'destination_disabled' });
    expect(await eventually(() => pipeline.deadLettersFor(toDeleted.deliveryId)[0], 'deleted')).toMatchObject({ reason: 'destination_deleted' });
    expect(receiver.requests.filter((request) => request.path === '/disabled' || request.path === '/deleted')).toEqual([]);
  });

  it('uses the current URL and secret for each attempt, and expires an attempt past the window', async () => {
    await pipeline.putDestination(webhooksDestination('moving', [{ url: receiver.url('/old-url') }], { sharedSecret: 'old' }));
    const before = await pipeline.deliver('moving', { type: 'track', event: 'before the change' });
    await settled(1);
    expect(requestsFor(receiver, before)[0]!.path).toBe('/old-url');

    await pipeline.putDestination(webhooksDestination('moving', [{ url: receiver.url('/new-url') }], { sharedSecret: 'rotated' }));
    await configApplied();
    const now = Date.now();
    const retried = await pipeline.deliver('moving', { type: 'track', event: 'retry' }, { attempts: 2, firstAttemptAt: now - 5000, lastError: 'HTTP 503', lastStatus: 503 });
    const expired = await pipeline.deliver('moving', { type: 'track', event: 'too late' }, { attempts: 3, firstAttemptAt: now - ladder.windowMs - 1000, lastError: 'HTTP 503', lastStatus: 503 });
    await settled(2);
    const [request] = requestsFor(receiver, retried);
    expect(request!.path).toBe('/new-url');
    expect(request!.headers['x-signature']).toBe(pythonHmacSha1('rotated', request!.body));
    expect(requestsFor(receiver, expired)).toEqual([]);
    const [dead] = await eventually(() => pipeline.deadLettersFor(expired.deliveryId).length > 0 && pipeline.deadLettersFor(expired.deliveryId), 'expired');
    expect(dead).toMatchObject({ reason: 'expired', status: 503, delivery: { attempts: 3 } });
  });

  it('a later retry climbs the ladder and keeps the first-attempt time', async () => {
    await pipeline.putDestination(webhooksDestination('flaky', [{ url: receiver.url('/status/503') }]));
    const firstAttemptAt = Date.now() - 3000;
    const delivery = await pipeline.deliver('flaky', { type: 'track', event: 'flaky' }, { attempts: 1, firstAttemptAt, lastError: 'HTTP 503', lastStatus: 503 });
    await settled(1);
    const [retry] = await eventually(() => pipeline.retriesFor(delivery.deliveryId).length > 0 && pipeline.retriesFor(delivery.deliveryId), 'retry');
    expect(retry).toMatchObject({ tier: '2s', delivery: { attempts: 2, firstAttemptAt, lastStatus: 503 } });
  });
});

describe('SSRF guard lifted by DELIVERY_ALLOW_PRIVATE_NETWORKS=true', () => {
  it('delivers to loopback by address and by name, and attempts the cloud metadata address', async () => {
    await pipeline.putDestination(webhooksDestination('loopback-name', [{ url: `http://localhost:${receiver.port}/by-name` }]));
    await pipeline.putDestination(webhooksDestination('metadata', [{ url: 'http://169.254.169.254/latest/meta-data/' }]));
    const byName = await pipeline.deliver('loopback-name', { type: 'track', event: 'by name' });
    const delivery = await pipeline.deliver('metadata', { type: 'track', event: 'metadata' });
    await settled(2);
    expect(requestsFor(receiver, byName).map((request) => request.path)).toEqual(['/by-name']);
    // What answers there depends on the machine (nothing, or a metadata service refusing a
    // POST); either way the request was attempted, not refused by the guard.
    const outcome = await eventually(
      () => pipeline.retriesFor(delivery.deliveryId)[0]?.delivery.lastError ?? pipeline.deadLettersFor(delivery.deliveryId)[0]?.error,
      'an outcome record',
    );
    expect(outcome).not.toMatch(/internal address/);
    expect(pipeline.deadLettersFor(delivery.deliveryId).filter((dead) => dead.reason === 'blocked_address')).toEqual([]);
  });
});

describe('consumer lag', () => {
  it('reports tributary_consumer_lag for both lanes, per partition, back to 0 once their offsets are committed', async () => {
    await pipeline.putDestination(webhooksDestination('lag', [{ url: receiver.url('/lag') }]));
    await pipeline.deliver('lag', { type: 'track', event: 'first lane' });
    await pipeline.deliverMany([{ destinationId: 'lag', body: { type: 'track', event: 'retry lane' } }], 'retry');
    await settled(2);
    const lanes = [
      { group: `${pipeline.namespace}-dispatcher`, topic: pipeline.topics.deliveries },
      { group: `${pipeline.namespace}-dispatcher-retries`, topic: pipeline.topics.dueRetries },
    ];
    // Offsets are committed with the outcome records, a commit interval after settling.
    for (const { group, topic } of lanes) await eventually(async () => (await metricValue(dispatcher.url, 'tributary_consumer_lag', { group, topic })) === 0, `no lag on ${topic}`);
    const exposition = await (await fetch(`${dispatcher.url}/metrics`)).text();
    for (const { group, topic } of lanes) {
      for (const partition of ['0', '1']) expect(exposition).toContain(`tributary_consumer_lag{group="${group}",topic="${topic}",partition="${partition}",service="dispatcher"} 0`);
    }
  });
});
