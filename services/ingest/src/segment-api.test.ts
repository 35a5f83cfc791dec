/**
 * The Segment API's HTTP behaviour through Fastify's in-process injection, with the
 * Kafka side replaced by a recording submit function (the real transaction path is
 * covered by segment-api.it.test.ts against the real broker).
 */
import { gzipSync } from 'node:zlib';
import type { FastifyError } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IngestMessage, Source } from '@tributary/schemas';
import {
  createHttpServer,
  createLogger,
  createMetrics,
  createReadiness,
  MAX_JSON_DEPTH,
  ProduceFailedError,
  ProduceTimeoutError,
  SourceLanes,
  type HttpServer,
  type Metrics,
  type ProduceRecord,
} from '@tributary/shared';
import { createIngestMetrics } from './ingest-metrics.js';
import { clientMistake, registerSegmentApi } from './segment-api.js';
import { MAX_REQUEST_BYTES } from '@tributary/shared/segment';

const WRITE_KEY = 'wk_test_enabled';
const DISABLED_KEY = 'wk_test_disabled';
const SOURCES: Record<string, Source> = {
  [WRITE_KEY]: { id: 'web', name: 'Web', writeKey: WRITE_KEY, enabled: true },
  [DISABLED_KEY]: { id: 'legacy', name: 'Legacy', writeKey: DISABLED_KEY, enabled: false },
};
const NOW = Date.parse('2024-03-01T10:00:00.000Z');
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
const json = { 'content-type': 'application/json', authorization: basic(WRITE_KEY) };

let app: HttpServer;
let metrics: Metrics;
let submitted: ProduceRecord[][];
let submit: (records: ProduceRecord[]) => Promise<void>;
let ready: boolean;
let overloaded: boolean;
/** The sources the handler asked about room for. */
let overloadAskedFor: Array<string | undefined>;

let lanes: SourceLanes;
/** The units each request was charged (laneFor's argument). */
let charged: number[];
/** The source's enabled destinations, as the config would give them. */
let destinations: number;

beforeEach(async () => {
  submitted = [];
  charged = [];
  lanes = new SourceLanes(5);
  destinations = 1;
  ready = true;
  overloaded = false;
  overloadAskedFor = [];
  submit = async (records) => void submitted.push(records);
  const logger = createLogger({ service: 'ingest-test', level: 'silent' });
  metrics = createMetrics('ingest-test');
  app = createHttpServer({ logger, metrics, readiness: createReadiness() });
  registerSegmentApi(app, {
    sourceByWriteKey: (key) => SOURCES[key],
    encode: (message, lane) => ({ topic: `ingest-${lane}`, value: Buffer.from(JSON.stringify(message)) }),
    submit: (records) => submit(records),
    isReady: () => ready,
    isOverloaded: (sourceId) => (overloadAskedFor.push(sourceId), overloaded),
    logger,
    metrics: createIngestMetrics(metrics.registry),
    laneFor: (sourceId, units, now) => (charged.push(units), lanes.laneFor(sourceId, units, now)),
    giveBack: (sourceId, units) => lanes.giveBack(sourceId, units),
    destinationCount: () => destinations,
    now: () => NOW,
    newMessageId: () => 'generated',
  });
  await app.ready();
});

afterEach(async () => {
  await app.close();
});

const written = (): Array<{ key: string; value: IngestMessage }> =>
  submitted.flat().map((record) => ({ key: record.key.toString(), value: JSON.parse(record.value.toString()) as IngestMessage }));

function post(url: string, body: unknown, headers: Record<string, string> = json) {
  return app.inject({ method: 'POST', url, headers, payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
}

describe('accepted calls', () => {
  it('takes the write key in the body beside a bearer token (analytics-node and analytics-python with OAuth)', async () => {
    const response = await post('/v1/batch', { writeKey: WRITE_KEY, batch: [{ type: 'track', userId: 'u', event: 'e' }] }, { ...json, authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.oauth-token' });
    expect(response.statusCode).toBe(200);
    expect(written().map(({ value }) => value.sourceId)).toEqual(['web']);
  });

  it('answers 200 {"success":true} once the records are committed, keyed by anonymousId else userId', async () => {
    const response = await post('/v1/batch', {
      batch: [
        { type: 'track', userId: 'u1', anonymousId: 'a1', event: 'Clicked' },
        { type: 'identify', userId: 'u2' },
      ],
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
    expect(written().map(({ key, value }) => [key, value.type, value.sourceId, value.receivedAt])).toEqual([
      ['a1', 'track', 'web', NOW],
      ['u2', 'identify', 'web', NOW],
    ]);
    expect(submitted).toHaveLength(1);
  });

  it.each([
    ['/v1/identify', { userId: 'u', traits: { plan: 'pro' } }, 'identify'],
    ['/v1/track', { userId: 'u', event: 'Signed Up' }, 'track'],
    ['/v1/page', { userId: 'u', name: 'Home' }, 'page'],
    ['/v1/screen', { userId: 'u', name: 'Settings' }, 'screen'],
    ['/v1/group', { userId: 'u', groupId: 'g' }, 'group'],
    ['/v1/alias', { userId: 'u', previousId: 'a' }, 'alias'],
    ['/v1/import', { batch: [{ type: 'track', userId: 'u', event: 'Imported', timestamp: '2015-01-01T00:00:00Z' }] }, 'track'],
  ])('%s writes a %s record', async (url, body, type) => {
    const response = await post(url, body);
    expect(response.statusCode).toBe(200);
    expect(written().map(({ value }) => value.type)).toEqual([type]);
  });

  it('accepts the write key in the body, batch-level or single-call, as analytics.js sends it with text/plain', async () => {
    const batch = await post('/v1/batch', { writeKey: WRITE_KEY, batch: [{ type: 'track', userId: 'u', event: 'e' }] }, { 'content-type': 'text/plain' });
    const single = await post('/v1/track', { writeKey: WRITE_KEY, userId: 'u', event: 'e' }, { 'content-type': 'text/plain;charset=UTF-8' });
    expect([batch.statusCode, single.statusCode]).toEqual([200, 200]);
    expect(written()).toHaveLength(2);
  });

  it.each([
    ['/v1/t', 'track', { event: 'Clicked', properties: { button: 'buy' } }],
    ['/v1/p', 'page', { name: 'Home', category: null, properties: { name: 'Home', url: 'https://shop.example/' } }],
    ['/v1/i', 'identify', { traits: { plan: 'pro' } }],
    ['/v1/g', 'group', { groupId: 'acme', traits: { seats: 3 } }],
    ['/v1/s', 'screen', { name: 'Settings' }],
  ] as const)('%s (analytics.js) writes the %s record the full path would', async (url, type, fields) => {
    // What analytics-next's fetch dispatcher posts: type initial as the path, text/plain,
    // the write key in the body beside _metadata and a null userId.
    const body = {
      ...fields,
      type,
      anonymousId: 'anon-7',
      userId: null,
      messageId: `ajs-next-${type}`,
      timestamp: '2024-03-01T09:59:59.000Z',
      sentAt: '2024-03-01T10:00:00.000Z',
      context: { library: { name: 'analytics.js', version: 'next-1.70.0' }, page: { path: '/' } },
      integrations: {},
      writeKey: WRITE_KEY,
      _metadata: { bundled: ['Segment.io'], unbundled: [], bundledIds: [] },
    };
    const response = await post(url, body, { 'content-type': 'text/plain' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
    expect(written().map(({ key, value }) => [key, value.type, value.messageId, value.sourceId])).toEqual([['anon-7', type, `ajs-next-${type}`, 'web']]);
  });

  it('/v1/a (analytics.js alias) and /v1/b (its batching dispatcher) are /v1/alias and /v1/batch', async () => {
    const alias = await post('/v1/a', { type: 'alias', userId: 'u-1', previousId: 'anon-7', writeKey: WRITE_KEY }, { 'content-type': 'text/plain' });
    const batch = await post(
      '/v1/b',
      {
        writeKey: WRITE_KEY,
        sentAt: '2024-03-01T10:00:00.000Z',
        batch: [
          { type: 'track', anonymousId: 'anon-7', event: 'Viewed', messageId: 'ajs-1', writeKey: WRITE_KEY },
          { type: 'page', anonymousId: 'anon-7', name: 'Home', messageId: 'ajs-2', writeKey: WRITE_KEY },
        ],
      },
      { 'content-type': 'text/plain' },
    );
    expect([alias.statusCode, batch.statusCode]).toEqual([200, 200]);
    expect(written().map(({ value }) => [value.type, value.messageId, value.sentAt])).toEqual([
      ['alias', 'generated', null],
      ['track', 'ajs-1', NOW],
      ['page', 'ajs-2', NOW],
    ]);
    // Refused the same way too: the short path is the same endpoint.
    const refused = await post('/v1/b', { writeKey: WRITE_KEY, batch: [{ type: 'track', anonymousId: 'a' }] }, { 'content-type': 'text/plain' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ success: false, code: 'validation_failed', errors: [{ index: 0, field: 'event' }] });
    const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/t', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } });
    expect(preflight.statusCode).toBe(204);
    const get = await app.inject({ method: 'GET', url: '/v1/b' });
    expect(get.statusCode).toBe(405);
    expect(get.json()).toMatchObject({ code: 'method_not_allowed', error: 'GET is not allowed on /v1/b: send the call with POST' });
  });

  it("applies a batch's integrations to each of its messages, under the message's own", async () => {
    const response = await post('/v1/batch', {
      integrations: { All: false, Webhooks: false },
      batch: [
        { type: 'track', userId: 'u', event: 'Quiet' },
        { type: 'track', userId: 'u', event: 'Loud', integrations: { Webhooks: true } },
      ],
    });
    expect(response.statusCode).toBe(200);
    expect(written().map(({ value }) => JSON.parse(value.integrations!) as unknown)).toEqual([
      { All: false, Webhooks: false },
      { All: false, Webhooks: true },
    ]);
  });

  it('takes the paths client libraries build by concatenation: a trailing slash (analytics-java posts to /v1/import/) or a doubled one', async () => {
    for (const url of ['/v1/import/', '/v1/batch/', '//v1/batch', '/v1/track/']) {
      const body = url.includes('track') ? { userId: 'u1', event: 'Clicked' } : { batch: [{ type: 'track', userId: 'u1', event: 'Clicked' }] };
      const response = await post(url, body);
      expect(response.statusCode, url).toBe(200);
    }
    expect(submitted).toHaveLength(4);
  });

  it('accepts a gzip body', async () => {
    const body = gzipSync(JSON.stringify({ batch: [{ type: 'track', userId: 'u', event: 'zipped' }] }));
    const response = await post('/v1/batch', body, { ...json, 'content-encoding': 'gzip' });
    expect(response.statusCode).toBe(200);
    expect(written()[0]!.value.event).toBe('zipped');
  });

  it('sends CORS headers and answers the preflight', async () => {
    const preflight = await app.inject({ method: 'OPTIONS', url: '/v1/track', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'Authorization, Content-Type, Content-Encoding, X-Retry-Count',
      'access-control-allow-methods': 'POST, OPTIONS',
    });
    const response = await post('/v1/track', { userId: 'u', event: 'e' });
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const refused = await post('/v1/track', { userId: 'u' });
    expect(refused.headers['access-control-allow-origin']).toBe('*');
  });

  it('writes what a source sends past its INGEST_SOURCE_RATE to the overflow lane, whole requests at a time, and counts it', async () => {
    const track = { type: 'track', userId: 'u', event: 'e' };
    expect((await post('/v1/batch', { batch: [track, track, track] })).statusCode).toBe(200);
    expect((await post('/v1/batch', { batch: [track, track, track] })).statusCode).toBe(200);
    expect((await post('/v1/track', track)).statusCode).toBe(200);
    expect(submitted.map((records) => [...new Set(records.map(({ topic }) => topic))])).toEqual([['ingest-main'], ['ingest-overflow'], ['ingest-main']]);
    expect(await metrics.registry.metrics()).toMatch(/tributary_ingest_overflow_messages_total\{service="ingest-test"\} 3/);
  });

  it('counts a request by its deliveries and bytes: one message to many destinations, or a large one, is past a small share', async () => {
    const track = { type: 'track', userId: 'u', event: 'e' };
    expect((await post('/v1/track', track)).statusCode).toBe(200);
    destinations = 6;
    expect((await post('/v1/track', track)).statusCode).toBe(200);
    destinations = 1;
    expect((await post('/v1/track', { ...track, properties: { pad: 'x'.repeat(25_000) } })).statusCode).toBe(200);
    expect((await post('/v1/track', track)).statusCode).toBe(200);
    expect(submitted.map((records) => records[0]!.topic)).toEqual(['ingest-main', 'ingest-overflow', 'ingest-overflow', 'ingest-main']);
  });

  it('gives the share back when Kafka did not take a main-lane request, so its retry is not sent to the overflow lane', async () => {
    const track = { type: 'track', userId: 'u', event: 'e' };
    submit = () => Promise.reject(new ProduceTimeoutError(10_000));
    expect((await post('/v1/batch', { batch: [track, track, track, track] })).statusCode).toBe(503);
    submit = async (records) => void submitted.push(records);
    expect((await post('/v1/batch', { batch: [track, track, track, track] })).statusCode).toBe(200);
    expect(submitted.map((records) => records[0]!.topic)).toEqual(['ingest-main']);
  });

  it('counts requests by route and status, messages by type, and batch sizes', async () => {
    await post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'e' }, { type: 'track', userId: 'u', event: 'e' }, { type: 'page', userId: 'u' }] });
    await post('/v1/track', { userId: 'u' });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/tributary_ingest_requests_total\{route="\/v1\/batch",status="200",service="ingest-test"\} 1/);
    expect(text).toMatch(/tributary_ingest_requests_total\{route="\/v1\/track",status="400",service="ingest-test"\} 1/);
    expect(text).toMatch(/tributary_ingest_messages_total\{type="track",service="ingest-test"\} 2/);
    expect(text).toMatch(/tributary_ingest_messages_total\{type="page",service="ingest-test"\} 1/);
    expect(text).toMatch(/tributary_ingest_batch_size_sum\{service="ingest-test"\} 3/);
  });
});

describe('refused calls: nothing is submitted', () => {
  afterEach(() => {
    expect(submitted).toEqual([]);
  });

  it('401 without credentials, saying how to authenticate', async () => {
    const response = await post('/v1/track', { userId: 'u', event: 'e' }, { 'content-type': 'application/json' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      success: false,
      code: 'missing_write_key',
      error: 'missing write key: send the write key as the HTTP basic auth user name with an empty password (curl -u WRITE_KEY:), or as "writeKey" in the JSON body',
      message: 'missing write key: send the write key as the HTTP basic auth user name with an empty password (curl -u WRITE_KEY:), or as "writeKey" in the JSON body',
    });
    expect(response.headers['www-authenticate']).toMatch(/^Basic realm=/);
  });

  it('401 for an unknown write key, without echoing it', async () => {
    const response = await post('/v1/track', { userId: 'u', event: 'e' }, { ...json, authorization: basic('wk_not_a_real_key') });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      success: false,
      code: 'invalid_write_key',
      error: 'invalid write key: no source has this write key',
      message: 'invalid write key: no source has this write key',
    });
    expect(response.body).not.toContain('wk_not_a_real_key');
  });

  it('401 for a disabled source, by header or by body', async () => {
    const byHeader = await post('/v1/track', { userId: 'u', event: 'e' }, { ...json, authorization: basic(DISABLED_KEY) });
    const byBody = await post('/v1/track', { writeKey: DISABLED_KEY, userId: 'u', event: 'e' }, { 'content-type': 'application/json' });
    for (const response of [byHeader, byBody]) {
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ success: false, code: 'invalid_write_key' });
      expect(response.body).not.toContain(DISABLED_KEY);
    }
  });

  it('401 for a bearer token without a write key in the body', async () => {
    const response = await post('/v1/track', { userId: 'u', event: 'e' }, { ...json, authorization: `Bearer ${WRITE_KEY}` });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'missing_write_key', error: expect.stringContaining('not HTTP basic auth and the body has no "writeKey"') as unknown as string });
  });

  it('401 for a write key in the body when basic auth names another key: basic auth decides', async () => {
    const response = await post('/v1/track', { writeKey: WRITE_KEY, userId: 'u', event: 'e' }, { ...json, authorization: basic('wk_not_a_real_key') });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('invalid_write_key');
  });

  it('every refusal repeats its sentence as message, which analytics-python reads from any non-2xx answer', async () => {
    const refusals = [
      await post('/v1/track', { userId: 'u' }),
      await post('/v1/track', { userId: 'u', event: 'e' }, { 'content-type': 'application/json' }),
      await post('/v1/purchase', { userId: 'u' }),
      await app.inject({ method: 'GET', url: '/v1/batch' }),
      await post('/v1/batch', '{"batch": ['),
    ];
    for (const response of refusals) {
      const body = response.json<{ success: boolean; error: string; message: string }>();
      expect(body.success).toBe(false);
      expect(body.message).toBe(body.error);
    }
  });

  it('answers a batch of long messageIds in a few KB: each id cut to 100 characters', async () => {
    const batch = Array.from({ length: 100 }, (_, n) => ({ type: 'track', userId: 'u', messageId: `${n}-${'m'.repeat(4_500)}` }));
    const response = await post('/v1/batch', { batch });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'validation_failed', errorCount: 200 });
    expect(response.body.length).toBeLessThan(60_000);
  });

  it('400 naming the message and field of a validation failure', async () => {
    const response = await post('/v1/batch', {
      batch: [
        { type: 'track', userId: 'u', event: 'ok' },
        { type: 'group', userId: 'u', messageId: 'g-1' },
      ],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      success: false,
      code: 'validation_failed',
      error: 'message 1: group needs groupId; nothing in this request was accepted',
      message: 'message 1: group needs groupId; nothing in this request was accepted',
      errors: [{ index: 1, messageId: 'g-1', field: 'groupId', message: 'group needs groupId' }],
      errorCount: 1,
    });
  });

  it('400 too_deep for a free-form field the router would refuse as nested too deep, naming it', async () => {
    let deep: Record<string, unknown> = {};
    for (let level = 1; level <= MAX_JSON_DEPTH; level++) deep = { a: deep };
    // properties one level past the limit: the body itself is only two levels deeper.
    const single = await post('/v1/track', { userId: 'u', event: 'e', properties: deep });
    expect(single.statusCode).toBe(400);
    expect(single.json()).toMatchObject({
      success: false,
      code: 'too_deep',
      limit: MAX_JSON_DEPTH,
      errors: [{ index: 0, field: 'properties' }],
      errorCount: 1,
    });
    // A batch's context is merged into every message, so it is held to the same limit.
    const batch = await post('/v1/batch', { context: deep, batch: [{ type: 'track', userId: 'u', event: 'e' }] });
    expect(batch.statusCode).toBe(400);
    expect(batch.json()).toMatchObject({ code: 'too_deep', errors: [{ index: 0, field: 'context' }] });
    expect(submitted).toEqual([]);
  });

  it('400 for malformed JSON and for an empty body', async () => {
    const malformed = await post('/v1/batch', '{"batch": [', json);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ success: false, code: 'invalid_json' });
    const empty = await app.inject({ method: 'POST', url: '/v1/batch', headers: json });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ success: false, code: 'invalid_json', error: 'the request body is empty: send a JSON object' });
  });

  it('400 naming the 500 KB limit for a body over 512000 bytes', async () => {
    const body = JSON.stringify({ batch: [{ type: 'track', userId: 'u', event: 'e' }], pad: 'x'.repeat(MAX_REQUEST_BYTES) });
    const response = await post('/v1/batch', body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'request_too_large', limit: 512000 });
  });

  it('413 for a body over the 5 MB hard cap', async () => {
    const response = await post('/v1/batch', 'x'.repeat(5 * 1024 * 1024 + 1));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ success: false, code: 'body_too_large' });
  });

  it('415 for a wrong content type, a missing one, an invalid one, and an unknown encoding', async () => {
    const body = JSON.stringify({ userId: 'u', event: 'e' });
    const form = await post('/v1/track', body, { ...json, 'content-type': 'application/x-www-form-urlencoded' });
    const invalid = await post('/v1/track', body, { ...json, 'content-type': '???' });
    const missing = await app.inject({ method: 'POST', url: '/v1/track', headers: { authorization: basic(WRITE_KEY) }, payload: body });
    const brotli = await post('/v1/track', body, { ...json, 'content-encoding': 'br' });
    for (const [response, code] of [
      [form, 'unsupported_media_type'],
      [invalid, 'unsupported_media_type'],
      [missing, 'unsupported_media_type'],
      [brotli, 'unsupported_content_encoding'],
    ] as const) {
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({ success: false, code });
    }
  });

  it('400 for gzip that is not gzip', async () => {
    const response = await post('/v1/track', JSON.stringify({ userId: 'u', event: 'e' }), { ...json, 'content-encoding': 'gzip' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'invalid_gzip' });
  });

  it('404 JSON for an unknown /v1 route', async () => {
    const response = await post('/v1/purchase', { userId: 'u' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, code: 'not_found', error: expect.stringContaining('POST /v1/purchase') });
  });

  it('405 JSON with Allow for a wrong method', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
      const response = await app.inject({ method, url: '/v1/batch' });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe('POST, OPTIONS');
      expect(response.json()).toMatchObject({ success: false, code: 'method_not_allowed' });
    }
    expect((await app.inject({ method: 'HEAD', url: '/v1/track' })).statusCode).toBe(405);
  });

  it('checks the Authorization header before reading the body', async () => {
    const response = await post('/v1/batch', '{"batch": [', { ...json, authorization: basic('wk_not_a_real_key') });
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('invalid_write_key');
  });

  it('500 when a validated message cannot be encoded, before anything is submitted', async () => {
    const logger = createLogger({ service: 'ingest-test', level: 'silent' });
    const broken = createHttpServer({ logger, metrics: createMetrics('ingest-broken'), readiness: createReadiness() });
    registerSegmentApi(broken, {
      sourceByWriteKey: (key) => SOURCES[key],
      encode: () => {
        throw new Error('value does not match the schema');
      },
      submit: (records) => submit(records),
      isReady: () => true,
    isOverloaded: () => false,
      logger,
      metrics: createIngestMetrics(createMetrics('ingest-broken-2').registry),
    });
    try {
      const response = await broken.inject({ method: 'POST', url: '/v1/track', headers: json, payload: JSON.stringify({ userId: 'u', event: 'e' }) });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({
        success: false,
        code: 'internal_error',
        error: 'message 0 passed validation but could not be encoded; nothing in this request was accepted',
        message: 'message 0 passed validation but could not be encoded; nothing in this request was accepted',
      });
    } finally {
      await broken.close();
    }
  });

  it('500, logged, for a failure inside the service — not a 400 the client would drop, nor its message', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'ingest-test', level: 'error', destination: { write: (line: string) => void lines.push(line) } });
    const broken = createHttpServer({ logger, metrics: createMetrics('ingest-bug'), readiness: createReadiness() });
    registerSegmentApi(broken, {
      sourceByWriteKey: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'enabled')");
      },
      encode: (message, lane) => ({ topic: `ingest-${lane}`, value: Buffer.from(JSON.stringify(message)) }),
      submit: (records) => submit(records),
      isReady: () => true,
      isOverloaded: () => false,
      logger,
      metrics: createIngestMetrics(createMetrics('ingest-bug-2').registry),
    });
    try {
      const response = await broken.inject({ method: 'POST', url: '/v1/track?writeKey=wk_in_query', headers: json, payload: JSON.stringify({ userId: 'u', event: 'e' }) });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toMatchObject({ success: false, code: 'internal_error' });
      expect(response.body).not.toContain('enabled');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'segment API request failed', route: '/v1/track', err: { type: 'TypeError' } });
      expect(lines[0]).not.toContain('wk_in_query');
      expect(lines[0]).not.toContain(WRITE_KEY);
    } finally {
      await broken.close();
    }
  });

  it('503 while not ready', async () => {
    ready = false;
    const response = await post('/v1/track', { userId: 'u', event: 'e' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.json()).toMatchObject({ success: false, code: 'unavailable' });
  });
});

describe('clientMistake: which errors are the client\'s 4xx', () => {
  const error = (message: string, props: Record<string, unknown>) => Object.assign(new Error(message), props) as unknown as FastifyError;

  it("is Fastify's own refusals of a body, and a body the client broke off", () => {
    expect(clientMistake(error('Request body size did not match Content-Length', { code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', statusCode: 400 }))).toEqual({
      status: 400,
      code: 'bad_request',
      error: 'the request could not be read: Request body size did not match Content-Length',
    });
    expect(clientMistake(error('x', { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }))?.code).toBe('body_too_large');
    expect(clientMistake(error('aborted', { code: 'ECONNRESET', statusCode: 400 }))?.code).toBe('request_aborted');
  });

  it("is one of the API's own errors, thrown", () => {
    const thrown = { status: 415, code: 'unsupported_media_type', error: 'send JSON' };
    expect(clientMistake(thrown as unknown as FastifyError)).toBe(thrown);
  });

  it('is nothing else: a bug, an error with a status from a library, a Fastify 5xx', () => {
    expect(clientMistake(new TypeError("Cannot read properties of undefined (reading 'id')") as unknown as FastifyError)).toBeUndefined();
    expect(clientMistake(error('upstream said no', { status: 400, code: 'UND_ERR' }))).toBeUndefined();
    expect(clientMistake(error('schema registry', { statusCode: 400 }))).toBeUndefined();
    expect(clientMistake(error('x', { code: 'FST_ERR_SOMETHING', statusCode: 500 }))).toBeUndefined();
  });
});

describe('what a request is charged', () => {
  const tiny = (count: number) => Array.from({ length: count }, () => ({ type: 'track', userId: 'u', event: 'e' }));

  it("charges a batch by what it is written as: its context copied into each message, not the body's 32 KB", async () => {
    const context = { library: { name: 'analytics-go' }, pad: 'c'.repeat(30_000) };
    const body = JSON.stringify({ context, batch: tiny(60) });
    expect(Buffer.byteLength(body)).toBeLessThan(33_000);
    const response = await post('/v1/batch', body);
    expect(response.statusCode).toBe(200);
    // 60 messages, each written with the 30 KB context: about 1.8 MB, 4 KiB a unit.
    expect(charged).toEqual([Math.ceil((60 * (JSON.stringify(context).length + JSON.stringify(tiny(1)[0]).length)) / 4_096)]);
  });

  it('charges an ordinary request as before: its messages, or its body in 4 KiB units', async () => {
    await post('/v1/batch', { batch: tiny(3) });
    await post('/v1/track', { userId: 'u', event: 'e', properties: { pad: 'x'.repeat(25_000) } });
    expect(charged).toEqual([3, 7]);
  });

  it("refuses the reviewer's 32.7 KB batch whose context.integrations, written twice, makes 2.65 MB", async () => {
    const context = { library: { name: 'analytics-go' }, pad: 'c'.repeat(16_000), integrations: { Webhooks: { headers: 'i'.repeat(14_000) } } };
    const body = JSON.stringify({ context, batch: tiny(60) });
    expect(Buffer.byteLength(body)).toBeLessThan(33_000);
    const response = await post('/v1/batch', body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'request_too_large', limit: 2_000_000 });
    expect(submitted).toEqual([]);
  });
});

describe('context.ip', () => {
  const contextOf = (index = 0) => JSON.parse(written()[index]!.value.context!) as Record<string, unknown>;

  it("stores the request's address when the client sent none, and ignores X-Forwarded-For unless a proxy is trusted", async () => {
    const response = await post('/v1/track', { anonymousId: 'a', event: 'e' }, { ...json, 'x-forwarded-for': '203.0.113.50' });
    expect(response.statusCode).toBe(200);
    expect(contextOf()).toEqual({ ip: '127.0.0.1' });
  });

  it('never overwrites an ip the client sent', async () => {
    await post('/v1/track', { anonymousId: 'a', event: 'e', context: { ip: '203.0.113.9' } });
    expect(contextOf()).toEqual({ ip: '203.0.113.9' });
  });

  it('takes the address the trusted proxy appended to X-Forwarded-For (INGEST_TRUST_PROXY=1)', async () => {
    const logger = createLogger({ service: 'ingest-test', level: 'silent' });
    const proxied = createHttpServer({ logger, metrics: createMetrics('ingest-proxied'), readiness: createReadiness() });
    registerSegmentApi(proxied, {
      sourceByWriteKey: (key) => SOURCES[key],
      encode: (message, lane) => ({ topic: `ingest-${lane}`, value: Buffer.from(JSON.stringify(message)) }),
      submit: (records) => submit(records),
      isReady: () => true,
      isOverloaded: () => false,
      trustedProxies: 1,
      logger,
      metrics: createIngestMetrics(createMetrics('ingest-proxied-2').registry),
    });
    try {
      // The client wrote its own X-Forwarded-For; the balancer appended the address it saw.
      const response = await proxied.inject({ method: 'POST', url: '/v1/track', headers: { ...json, 'x-forwarded-for': '10.9.9.9, 198.51.100.23' }, payload: '{"anonymousId":"a","event":"e"}' });
      expect(response.statusCode).toBe(200);
      expect(contextOf()).toEqual({ ip: '198.51.100.23' });
    } finally {
      await proxied.close();
    }
  });
});

describe('Kafka trouble', () => {
  it('503 at once, with Retry-After, while the bytes waiting for Kafka are at their bound — before reading the body', async () => {
    overloaded = true;
    const response = await app.inject({ method: 'POST', url: '/v1/track', headers: json, payload: '{"userId":"u","event":"e"}' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json()).toMatchObject({ success: false, code: 'unavailable', error: expect.stringContaining('waiting for Kafka') as unknown as string });
    expect(submitted).toEqual([]);
    // Asked for the request's own source: one holding little of the bound may still get in.
    expect(overloadAskedFor).toEqual(['web']);
  });

  it('503 with Retry-After when the transaction fails', async () => {
    submit = () => Promise.reject(new ProduceFailedError(new Error('broker down')));
    const response = await post('/v1/track', { userId: 'u', event: 'e' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.json()).toEqual({
      success: false,
      code: 'unavailable',
      error: 'Kafka did not accept the messages; retry the request',
      message: 'Kafka did not accept the messages; retry the request',
    });
  });

  it('503 when Kafka does not acknowledge in time', async () => {
    submit = () => Promise.reject(new ProduceTimeoutError(10_000));
    const response = await post('/v1/track', { userId: 'u', event: 'e' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'unavailable', error: 'Kafka did not acknowledge the messages within 10000 ms; retry the request' });
  });
});
