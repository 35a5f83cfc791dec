/**
 * Issue 13, "must show": records written by @tributary/producer are delivered exactly like
 * the same calls made over HTTP. Ingest, router and dispatcher run as real processes on the
 * real broker and registry; a real HTTP receiver records each webhook. Each call is made
 * twice — once over the Segment API, once through the producer, with its own messageId —
 * and the two webhook bodies must be equal but for messageId and receivedAt.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestMessage } from '@tributary/schemas';
import { adminClient, eventually, readTopicToEnd, stackEndpoints, stackEnv, startService, testCodec, testKafka, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import type { BatchMessage, IdentifyCall, PageCall, TrackCall } from './messages.js';
import { RefusedError, TributaryProducer } from './index.js';

const ADMIN_TOKEN = 'producer-admin-token';

class Receiver {
  readonly bodies = new Map<string, Array<Record<string, unknown>>>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        const id = String(body.messageId);
        this.bodies.set(id, [...(this.bodies.get(id) ?? []), body]);
        response.writeHead(200).end('{}');
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** The calls of every type, each with the fields a real application sends. */
function calls(prefix: string): BatchMessage[] {
  const timestamp = '2026-11-24T09:30:00.000Z';
  const context = { ip: '203.0.113.9', library: { name: 'probe', version: '1.0.0' } };
  return [
    { type: 'identify', messageId: `${prefix}-identify`, userId: 'u-1', anonymousId: 'anon-1', traits: { email: 'ada@example.com', plan: 'pro' }, timestamp, context },
    { type: 'track', messageId: `${prefix}-track`, userId: 'u-1', event: 'Order Completed', properties: { total: 42.5, items: [{ sku: 'a' }] }, timestamp, context },
    { type: 'page', messageId: `${prefix}-page`, anonymousId: 'anon-2', name: 'Pricing', category: 'Docs', properties: { path: '/pricing' }, timestamp },
    { type: 'screen', messageId: `${prefix}-screen`, userId: 'u-2', name: 'Home', properties: { tab: 'feed' }, timestamp },
    { type: 'group', messageId: `${prefix}-group`, userId: 'u-1', groupId: 'org-9', traits: { name: 'Acme' }, timestamp, integrations: { All: false, Webhooks: true } },
    { type: 'alias', messageId: `${prefix}-alias`, userId: 'u-1', previousId: 'anon-1', timestamp },
  ];
}

describe('@tributary/producer', () => {
  const namespace = uniqueNamespace('prod');
  const writeKey = `wk_producer_${namespace}`;
  const services: RunningService[] = [];
  const receiver = new Receiver();
  let producer: TributaryProducer;
  const admin = adminClient(() => services[0]!.url, ADMIN_TOKEN);

  const overHttp = async (path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${services[0]!.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    await receiver.start();
    const env = { ...stackEnv(namespace), ADMIN_TOKEN };
    for (const name of ['ingest', 'router', 'dispatcher'] as const) services.push(await startService(name, { env: { ...env, INSTANCE_ID: `producer-${name}` } }));
    await admin('PUT', '/sources/app', { name: 'App', writeKey });
    await admin('PUT', '/destinations/hooks', { type: 'webhooks', sources: ['app'], settings: { webhooks: [{ url: receiver.url }] } });
    const { brokers, registryUrl } = stackEndpoints();
    producer = await TributaryProducer.connect({ brokers, schemaRegistryUrl: registryUrl, writeKey, topicNamespace: namespace, transactionalId: `${namespace}-producer-test` });
  }, 180_000);

  afterAll(async () => {
    await producer?.close();
    for (const service of services.reverse()) await service.stop();
    await receiver.stop();
  });

  it('delivers every call type exactly as the same call over HTTP, once each', { timeout: 60_000 }, async () => {
    const http = calls('http');
    const direct = calls('direct');
    // Single calls through the typed methods, as a batch with a shared context, and the same over HTTP.
    for (const { type, ...call } of http.slice(0, 3)) expect((await overHttp(`/v1/${type}`, call)).status).toBe(200);
    expect((await overHttp('/v1/batch', { batch: http.slice(3), context: { app: { name: 'shop' } } })).status).toBe(200);
    const strip = (index: number): unknown => {
      const { type: _type, ...call } = direct[index]!;
      return call;
    };
    expect(await producer.identify(strip(0) as IdentifyCall)).toEqual({ messageIds: ['direct-identify'] });
    await producer.track(strip(1) as TrackCall);
    await producer.page(strip(2) as PageCall);
    expect(await producer.batch(direct.slice(3), { context: { app: { name: 'shop' } } })).toEqual({ messageIds: ['direct-screen', 'direct-group', 'direct-alias'] });

    await eventually(() => receiver.bodies.size >= 12, 'all twelve webhooks arrived', 30_000);
    // Over HTTP, ingest stores the request's address as context.ip where the call sent none (as
    // hosted Segment does); the producer has no request address. An ip the call sent is compared.
    const comparable = (body: Record<string, unknown>) => {
      const { messageId: _id, receivedAt: _received, context, ...rest } = body;
      const { ip, ...sent } = context as Record<string, unknown>;
      return { ...rest, context: ip === '127.0.0.1' ? sent : context };
    };
    for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias']) {
      const [viaHttp] = receiver.bodies.get(`http-${type}`)!;
      const [viaProducer] = receiver.bodies.get(`direct-${type}`)!;
      expect(comparable(viaProducer!), type).toEqual(comparable(viaHttp!));
    }
    // Nothing twice.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([...receiver.bodies.values()].every((bodies) => bodies.length === 1)).toBe(true);

    // Written the same way, too: a lone call by itself, a batch in a transaction (atomic-output.ts).
    const codec = testCodec();
    const writtenInTransaction = new Map<string, boolean | undefined>();
    for (const { message } of await readTopicToEnd(testKafka(), `${namespace}.ingest.v1`)) {
      const { messageId } = await codec.decode<IngestMessage>('ingest', message.value);
      // kafkajs keeps each record's batch attributes on the message (undocumented, stable in 2.x).
      writtenInTransaction.set(messageId, (message as { batchContext?: { inTransaction?: boolean } }).batchContext?.inTransaction);
    }
    for (const prefix of ['http', 'direct']) {
      for (const type of ['identify', 'track', 'page']) expect(writtenInTransaction.get(`${prefix}-${type}`), `${prefix}-${type}`).toBe(false);
      for (const type of ['screen', 'group', 'alias']) expect(writtenInTransaction.get(`${prefix}-${type}`), `${prefix}-${type}`).toBe(true);
    }
  });

  it('refuses what the HTTP API refuses, with the same code and text, and writes nothing of it', { timeout: 30_000 }, async () => {
    const invalid = [
      { type: 'track', messageId: 'refused-1', userId: 'u-1', event: 'Fine' },
      { type: 'track', messageId: 'refused-2', userId: 'u-1' },
    ] as unknown as BatchMessage[];
    const http = await overHttp('/v1/batch', { batch: invalid });
    expect(http.status).toBe(400);
    const refused = await producer.batch(invalid).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RefusedError);
    expect(refused).toMatchObject({ status: 400, code: http.body.code, message: http.body.error });

    const longId = { userId: 'u-1', event: 'e', messageId: 'x'.repeat(30_000) };
    const httpLong = await overHttp('/v1/track', longId);
    await expect(producer.track(longId)).rejects.toMatchObject({ status: 400, code: httpLong.body.code, message: httpLong.body.error });

    // The valid first message of the refused batch must not have been written: a later
    // marker arrives, and refused-1 never does.
    await producer.track({ userId: 'u-1', event: 'Marker', messageId: 'marker' });
    await eventually(() => receiver.bodies.has('marker'), 'the marker arrived');
    expect(receiver.bodies.has('refused-1')).toBe(false);
  });

  it('refuses an unknown write key as the HTTP API does', async () => {
    const { brokers, registryUrl } = stackEndpoints();
    const stranger = await TributaryProducer.connect({ brokers, schemaRegistryUrl: registryUrl, writeKey: 'wk_nobody', topicNamespace: namespace });
    try {
      await expect(stranger.track({ userId: 'u', event: 'e' })).rejects.toMatchObject({ name: 'RefusedError', status: 401, code: 'invalid_write_key' });
    } finally {
      await stranger.close();
    }
  }, 60_000);
});
