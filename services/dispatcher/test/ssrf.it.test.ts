/**
 * The SSRF guard at its default (DELIVERY_ALLOW_PRIVATE_NETWORKS=false): loopback and
 * link-local targets are refused as non-retryable dead letters and no request reaches
 * them — whether the URL names the address, an IPv4-mapped IPv6 form of it, or a host
 * name that resolves to it. delivery.it.test.ts shows the same targets allowed with the flag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, type RunningService, startService, uniqueNamespace } from '@tributary/test/harness';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { startReceiver, type Receiver } from './receivers.js';

let pipeline: TestPipeline;
let dispatcher: RunningService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  pipeline = new TestPipeline(uniqueNamespace('ssrf'), { delaysMs: [1000], windowMs: 60_000 });
  await pipeline.start();
  dispatcher = await startService('dispatcher', { env: pipeline.env({ DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_TIMEOUT: '1s' }) });
});

afterAll(async () => {
  await dispatcher?.stop();
  await pipeline?.stop();
  await receiver?.close();
});

describe('SSRF guard by default', () => {
  it('refuses 127.0.0.1, localhost, ::ffff:127.0.0.1 and 169.254.169.254 as blocked_address dead letters', async () => {
    const targets = {
      loopback: receiver.url('/loopback'),
      'loopback-name': `http://localhost:${receiver.port}/by-name`,
      'loopback-mapped': `http://[::ffff:127.0.0.1]:${receiver.port}/mapped`,
      metadata: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    };
    const deliveries = [];
    for (const [id, url] of Object.entries(targets)) {
      await pipeline.putDestination(webhooksDestination(id, [{ url }]));
      deliveries.push(await pipeline.deliver(id, { type: 'track', event: id }));
    }
    for (const delivery of deliveries) {
      const dead = await eventually(() => pipeline.deadLettersFor(delivery.deliveryId)[0], `dead letter for ${delivery.destinationId}`);
      expect(dead).toMatchObject({ reason: 'blocked_address', status: null, delivery: { attempts: 1 } });
      expect(dead.error).toMatch(/loopback, private, link-local/);
      expect(pipeline.retriesFor(delivery.deliveryId)).toEqual([]);
    }
    expect(receiver.requests).toEqual([]);
    expect(await metricValue(dispatcher.url, 'tributary_dead_letters_total', { reason: 'blocked_address' })).toBe(4);
  });
});
