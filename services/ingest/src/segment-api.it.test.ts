/**
 * The Segment API of the real ingest process (dist/main.js) against the real broker and
 * schema registry: what each endpoint writes to the ingest topic, that a 200 means the
 * transaction is committed, and that a refused request writes nothing at all.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { topicNames, type IngestMessage, type Source, type TopicNames } from '@tributary/schemas';
import { configKey, createProducer, prepareTopics, topicDefinitions, withAdmin, type AvroCodec } from '@tributary/shared';
import {
  eventually,
  readTopic,
  stackEnv,
  startService,
  testCodec,
  testKafka,
  testLogger,
  uniqueName,
  uniqueNamespace,
  type RunningService,
} from '@tributary/test/harness';

const WEB: Source = { id: 'web', name: 'Web', writeKey: 'wk_it_web_1234', enabled: true };
const LEGACY: Source = { id: 'legacy', name: 'Legacy', writeKey: 'wk_it_legacy_1234', enabled: false };

let namespace: string;
let topics: TopicNames;
let kafka: Kafka;
let codec: AvroCodec;
let configProducer: Producer;
let ingest: RunningService;

beforeAll(async () => {
  namespace = uniqueNamespace('ingest');
  topics = topicNames(namespace);
  kafka = testKafka();
  codec = testCodec();
  await prepareTopics({ kafka, codec, logger: testLogger(), definitions: topicDefinitions(topics), numPartitions: 2 });
  // The admin API is not here yet: sources go straight onto the config topic.
  configProducer = createProducer(kafka);
  await configProducer.connect();
  await configProducer.send({
    topic: topics.config,
    messages: [WEB, LEGACY].map((source) => ({
      key: configKey('source', source.id),
      value: codec.encode(topics.config, { entity: source, updatedAt: Date.now() }),
    })),
  });
  ingest = await startService('ingest', { env: stackEnv(namespace) });
});

afterAll(async () => {
  await ingest?.stop();
  await configProducer?.disconnect();
});

const basic = (writeKey: string) => `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;

interface PostOptions {
  writeKey?: string | null;
  headers?: Record<string, string>;
  gzip?: boolean;
}

async function post(path: string, body: unknown, options: PostOptions = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const writeKey = options.writeKey === undefined ? WEB.writeKey : options.writeKey;
  if (writeKey !== null) headers.authorization = basic(writeKey);
  let payload: string | Buffer = typeof body === 'string' ? body : JSON.stringify(body);
  if (options.gzip) {
    payload = gzipSync(payload);
    headers['content-encoding'] = 'gzip';
  }
  const response = await fetch(`${ingest.url}${path}`, { method: 'POST', headers, body: payload });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/**
 * Sends only the head of a POST announcing `contentLength` bytes and reads the answer. A
 * client that wrote the whole body first (fetch does) would meet a closed connection,
 * which is the point of the hard cap: the service answers without reading the body.
 */
function headersOnlyPost(path: string, contentLength: number): Promise<{ status: number; json: Record<string, unknown> }> {
  const { hostname, port } = new URL(ingest.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (headEnd < 0 || length === undefined || received.length < headEnd + 4 + Number(length)) return;
      socket.destroy();
      resolve({ status: Number(text.split(' ', 2)[1]), json: JSON.parse(text.slice(headEnd + 4)) as Record<string, unknown> });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${basic(WEB.writeKey)}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`,
    );
  });
}

interface Written {
  key: string;
  partition: number;
  value: IngestMessage;
}

/**
 * Reads the ingest topic (committed records only, unless told) until every id is there.
 * Values are decoded with the reader schema directly: `until` must answer synchronously,
 * and every record here was written by the ingest service with that very schema.
 */
async function readMessages(messageIds: string[], options: { readCommitted?: boolean; timeoutMs?: number; topic?: string } = {}): Promise<Map<string, Written>> {
  const reader = codec.reader('ingest');
  const found = new Map<string, Written>();
  let seen = 0;
  await readTopic(kafka, options.topic ?? topics.ingest, {
    readCommitted: options.readCommitted ?? true,
    timeoutMs: options.timeoutMs ?? 20_000,
    until: (records) => {
      for (const record of records.slice(seen)) {
        seen++;
        const value = reader.fromBuffer(record.message.value!.subarray(5)) as IngestMessage;
        found.set(value.messageId, { key: record.message.key!.toString('utf8'), partition: record.partition, value });
      }
      return messageIds.every((id) => found.has(id));
    },
  });
  return found;
}

/** Sum over partitions of the last stable offset: moves past a record only once its transaction has ended. */
async function stableOffsets(): Promise<number> {
  const offsets = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topics.ingest));
  return offsets.reduce((sum, { offset }) => sum + Number(offset), 0);
}

describe('accepted calls reach the ingest topic', () => {
  it('writes each endpoint’s call with its fields, key and timestamps', async () => {
    const run = uniqueName('ep');
    const id = (label: string) => `${run}-${label}`;
    const goTime = '2024-03-01T09:59:58+0000';
    const calls: Array<[string, Record<string, unknown>]> = [
      ['/v1/identify', { messageId: id('identify'), userId: 'u-1', traits: { email: 'u1@example.com' } }],
      ['/v1/track', { messageId: id('track'), anonymousId: 'anon-1', userId: 'u-1', event: 'Signed Up', properties: { plan: 'pro' } }],
      ['/v1/page', { messageId: id('page'), userId: 'u-1', name: 'Docs', category: 'Help', properties: { url: 'https://example.com/docs', name: 'Docs' } }],
      ['/v1/screen', { messageId: id('screen'), anonymousId: 'anon-2', name: 'Settings' }],
      ['/v1/group', { messageId: id('group'), userId: 'u-1', groupId: 'g-1', traits: { plan: 'enterprise' } }],
      ['/v1/alias', { messageId: id('alias'), userId: 'u-1', previousId: 'anon-1' }],
    ];
    const started = Date.now();
    for (const [path, body] of calls) {
      const response = await post(path, body);
      expect(response, path).toEqual({ status: 200, json: { success: true } });
    }
    const batch = await post('/v1/batch', {
      context: { library: { name: 'analytics-go', version: '2.1.1' } },
      messageId: `${run}-batch-envelope`,
      sentAt: new Date().toISOString(),
      batch: [
        {
          type: 'track',
          messageId: id('batch-track'),
          userId: 'u-2',
          event: 'Ordered',
          timestamp: goTime,
          integrations: { Webhooks: false },
          context: { ip: '203.0.113.7', integrations: { All: true } },
        },
        { type: 'identify', messageId: id('batch-identify'), anonymousId: 'anon-3', traits: { name: 'Ada' } },
      ],
    });
    expect(batch).toEqual({ status: 200, json: { success: true } });
    const finished = Date.now();

    const ids = [...calls.map(([, body]) => body.messageId as string), id('batch-track'), id('batch-identify')];
    const written = await readMessages(ids);
    const get = (label: string) => written.get(id(label))!;

    for (const message of written.values()) {
      expect(message.value.sourceId).toBe('web');
      expect(message.value.receivedAt).toBeGreaterThanOrEqual(started);
      expect(message.value.receivedAt).toBeLessThanOrEqual(finished);
    }
    expect(get('identify')).toMatchObject({ key: 'u-1', value: { type: 'identify', userId: 'u-1', traits: '{"email":"u1@example.com"}' } });
    expect(get('track')).toMatchObject({ key: 'anon-1', value: { type: 'track', event: 'Signed Up', properties: '{"plan":"pro"}', anonymousId: 'anon-1' } });
    expect(get('page').value).toMatchObject({ type: 'page', name: 'Docs', category: 'Help', properties: '{"url":"https://example.com/docs","name":"Docs"}' });
    expect(get('screen')).toMatchObject({ key: 'anon-2', value: { type: 'screen', name: 'Settings', userId: null } });
    expect(get('group').value).toMatchObject({ type: 'group', groupId: 'g-1', traits: '{"plan":"enterprise"}' });
    expect(get('alias').value).toMatchObject({ type: 'alias', previousId: 'anon-1', userId: 'u-1' });

    // No timestamp sent: the event happened at receipt.
    expect(get('identify').value).toMatchObject({ originalTimestamp: null, sentAt: null });
    expect(get('identify').value.timestamp).toBe(get('identify').value.receivedAt);

    // Batch: Go v2 timestamp kept (sentAt is now, so no skew), batch context merged,
    // integrations merged with the top-level entry winning.
    const ordered = get('batch-track');
    expect(ordered.key).toBe('u-2');
    expect(ordered.value.originalTimestamp).toBe(Date.parse('2024-03-01T09:59:58Z'));
    expect(ordered.value.timestamp).toBe(Date.parse('2024-03-01T09:59:58Z'));
    expect(ordered.value.sentAt).not.toBeNull();
    expect(JSON.parse(ordered.value.context!)).toEqual({
      library: { name: 'analytics-go', version: '2.1.1' },
      ip: '203.0.113.7',
      integrations: { All: true },
    });
    expect(JSON.parse(ordered.value.integrations!)).toEqual({ All: true, Webhooks: false });
    expect(get('batch-identify')).toMatchObject({ key: 'anon-3', value: { type: 'identify', traits: '{"name":"Ada"}' } });
  });

  it('corrects the timestamp of a client whose clock is an hour behind, and generates missing messageIds', async () => {
    const hourAgo = Date.now() - 3_600_000;
    const user = uniqueName('skewed');
    const response = await post('/v1/batch', {
      sentAt: new Date(hourAgo).toISOString(),
      batch: [{ type: 'track', userId: user, event: 'Late', timestamp: new Date(hourAgo - 30_000).toISOString() }],
    });
    expect(response.status).toBe(200);
    const all = await readTopic(kafka, topics.ingest, {
      until: (records) => records.some((record) => record.message.key?.toString() === user),
    });
    const record = all.find((r) => r.message.key?.toString() === user)!;
    const value = await codec.decode<IngestMessage>('ingest', record.message.value!);
    expect(value.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(value.originalTimestamp).toBe(hourAgo - 30_000);
    expect(value.timestamp).toBe(value.receivedAt - 30_000);
  });

  it('accepts a gzip body', async () => {
    const messageId = uniqueName('gzip');
    const response = await post('/v1/batch', { batch: [{ type: 'track', messageId, userId: 'u-gz', event: 'Compressed' }] }, { gzip: true });
    expect(response).toEqual({ status: 200, json: { success: true } });
    const written = await readMessages([messageId]);
    expect(written.get(messageId)?.value.event).toBe('Compressed');
  });

  it('accepts the write key in the body (text/plain, as analytics.js sends it)', async () => {
    const messageId = uniqueName('body-key');
    const response = await post(
      '/v1/track',
      { writeKey: WEB.writeKey, messageId, anonymousId: 'browser-1', event: 'Viewed' },
      { writeKey: null, headers: { 'content-type': 'text/plain;charset=UTF-8' } },
    );
    expect(response.status).toBe(200);
    const value = (await readMessages([messageId])).get(messageId)?.value;
    expect(value?.sourceId).toBe('web');
    // analytics.js sends no context.ip: the request's address is stored, as hosted Segment does.
    expect(JSON.parse(value?.context ?? 'null')).toEqual({ ip: '127.0.0.1' });
  });

  it('answers 200 once the transaction is committed: the records then pass the last stable offset', async () => {
    const before = await stableOffsets();
    const batch = Array.from({ length: 20 }, (_, index) => ({ type: 'track', messageId: uniqueName(`acked-${index}`), userId: `acked-${index}`, event: 'Acked' }));
    const response = await post('/v1/batch', { batch });
    expect(response.status).toBe(200);
    // 20 records plus at least one commit marker, all readable by read_committed consumers. The
    // broker writes the markers after the commit has answered (ingest answers after that), so
    // the last stable offset may pass them a moment after the 200.
    await eventually(async () => (await stableOffsets()) - before >= 21, 'the acknowledged batch and its commit marker below the last stable offset', 10_000);
    const ids = batch.map((message) => message.messageId);
    const written = await readMessages(ids, { readCommitted: true });
    expect(ids.filter((id) => written.has(id))).toEqual(ids);
  });
});

describe('ingest lanes', () => {
  it('writes a request past the source’s INGEST_SOURCE_RATE (500 a second) whole to the overflow lane, and the next small one to the main topic', async () => {
    const bulk = (name: string) => Array.from({ length: 600 }, (_, index) => ({ type: 'track', messageId: uniqueName(`${name}-${index}`), userId: `bulk-${index % 7}`, event: 'Bulk' }));
    // The first, from a full share, goes the main way and leaves the source 100 in debt; the
    // second, right after it, is past the share.
    const first = bulk('first');
    const batch = bulk('bulk');
    // What the tests before took of the share is back by then.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await post('/v1/batch', { batch: first })).status).toBe(200);
    expect((await post('/v1/batch', { batch })).status).toBe(200);
    // The debt is paid back at 500 a second: a small request 0.5 s later is covered again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = uniqueName('after-bulk');
    expect((await post('/v1/track', { messageId: after, userId: 'u-after', event: 'After' })).status).toBe(200);

    const overflow = await readMessages(batch.map(({ messageId }) => messageId), { topic: topics.ingestOverflow });
    expect(overflow.size).toBe(600);
    expect(overflow.get(batch[0]!.messageId)).toMatchObject({ key: 'bulk-0', value: { sourceId: 'web', event: 'Bulk' } });
    const main = await readMessages(first.map(({ messageId }) => messageId));
    expect(first.filter(({ messageId }) => !main.has(messageId))).toEqual([]);
    expect((await readMessages([after])).get(after)?.value.event).toBe('After');
    const metrics = await (await fetch(`${ingest.url}/metrics`)).text();
    expect(metrics).toMatch(/tributary_ingest_overflow_messages_total\{service="ingest"\} 600/);
  });
});

describe('refused calls write nothing', () => {
  const probe = `probe-${Date.now().toString(36)}`;
  const probeIds: string[] = [];
  const probeMessage = (extra: Record<string, unknown> = {}) => {
    const messageId = `${probe}-${probeIds.length}`;
    probeIds.push(messageId);
    return { type: 'track', messageId, anonymousId: probe, event: 'Probe', ...extra };
  };

  const oversized = () => probeMessage({ properties: { pad: 'x'.repeat(33_000) } });

  const cases: Array<[string, () => Promise<{ status: number; json: Record<string, unknown> }>, number, Record<string, unknown>]> = [
    ['no credentials', () => post('/v1/batch', { batch: [probeMessage()] }, { writeKey: null }), 401, { code: 'missing_write_key' }],
    ['wrong write key', () => post('/v1/batch', { batch: [probeMessage()] }, { writeKey: 'wk_wrong_key_999' }), 401, { code: 'invalid_write_key' }],
    ['disabled source', () => post('/v1/batch', { batch: [probeMessage()] }, { writeKey: LEGACY.writeKey }), 401, { code: 'invalid_write_key' }],
    [
      'one invalid message in a batch',
      () => post('/v1/batch', { batch: [probeMessage(), probeMessage(), { ...probeMessage(), event: undefined }] }),
      400,
      { code: 'validation_failed', errors: [{ index: 2, messageId: `${probe}-5`, field: 'event', message: 'track needs event (the event name)' }] },
    ],
    ['unknown type', () => post('/v1/batch', { batch: [probeMessage({ type: 'purchase' })] }), 400, { code: 'validation_failed' }],
    ['bad timestamp', () => post('/v1/batch', { batch: [probeMessage({ timestamp: 'yesterday' })] }), 400, { code: 'validation_failed' }],
    ['message over 32 KB', () => post('/v1/batch', { batch: [probeMessage(), oversized()] }), 400, { code: 'message_too_large', limit: 32768 }],
    [
      'request over 500 KB',
      () => post('/v1/batch', { batch: Array.from({ length: 20 }, () => probeMessage({ properties: { pad: 'x'.repeat(30_000) } })) }),
      400,
      { code: 'request_too_large', limit: 512000 },
    ],
    ['malformed JSON', () => post('/v1/batch', `{"batch":[${JSON.stringify(probeMessage())}`), 400, { code: 'invalid_json' }],
    ['wrong content type', () => post('/v1/batch', { batch: [probeMessage()] }, { headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, { code: 'unsupported_media_type' }],
    ['unknown content encoding', () => post('/v1/batch', { batch: [probeMessage()] }, { headers: { 'content-encoding': 'br' } }), 415, { code: 'unsupported_content_encoding' }],
    ['route type mismatch', () => post('/v1/identify', { ...probeMessage(), type: 'track' }), 400, { code: 'validation_failed' }],
    ['unknown route', () => post('/v1/purchase', probeMessage()), 404, { code: 'not_found' }],
    [
      'wrong method',
      async () => {
        const response = await fetch(`${ingest.url}/v1/batch`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ batch: [probeMessage()] }) });
        return { status: response.status, json: (await response.json()) as Record<string, unknown> };
      },
      405,
      { code: 'method_not_allowed' },
    ],
    ['body that is not an object', () => post('/v1/batch', [probeMessage()]), 400, { code: 'invalid_body' }],
    ['gzip header on a plain body', () => post('/v1/batch', { batch: [probeMessage()] }, { headers: { 'content-encoding': 'gzip' } }), 400, { code: 'invalid_gzip' }],
    ['body over the 5 MB hard cap, answered without reading it', () => headersOnlyPost('/v1/batch', 6_000_000), 413, { code: 'body_too_large' }],
  ];

  it.each(cases)('%s', async (_label, send, status, body) => {
    const before = await stableOffsets();
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.json).toMatchObject({ success: false, ...body });
    expect(typeof response.json.error).toBe('string');
    // What analytics-python reads from every refusal.
    expect(response.json.message).toBe(response.json.error);
    expect(await stableOffsets()).toBe(before);
  });

  it('none of the refused messages can be read from the topic, even uncommitted', async () => {
    // The sentinel has the probes' key, so it lands on their partition after anything they wrote.
    const sentinel = `${probe}-sentinel`;
    expect((await post('/v1/track', { messageId: sentinel, anonymousId: probe, event: 'Sentinel' })).status).toBe(200);
    const written = await readMessages([sentinel], { readCommitted: false });
    expect(written.has(sentinel)).toBe(true);
    expect(probeIds.length).toBeGreaterThan(20);
    expect(probeIds.filter((id) => written.has(id))).toEqual([]);
  });
});

describe('hostile requests', () => {
  let guarded: RunningService;

  beforeAll(async () => {
    guarded = await startService('ingest', { env: { ...stackEnv(namespace), INGEST_REQUEST_TIMEOUT: '2s', INGEST_HEADERS_TIMEOUT: '1s' } });
  });

  afterAll(async () => {
    await guarded?.stop();
  });

  const rss = async (service: RunningService) => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    return Number(/^process_resident_memory_bytes\{[^}]*\} (\S+)$/m.exec(text)?.[1]);
  };

  it('refuses a batch whose shared context would be copied into thousands of messages, without copying it', async () => {
    // 9,700 tiny messages sharing a 100 KB context: ~500 KB sent, about a gigabyte once the
    // context is merged into each of them.
    const context = { blob: 'x'.repeat(100_000) };
    const batch = Array.from({ length: 9_700 }, () => ({ type: 'track', userId: 'u', event: 'e' }));
    const body = gzipSync(JSON.stringify({ batch, context }));
    expect(body.length).toBeLessThan(20_000);
    const before = await rss(guarded);
    const response = await fetch(`${guarded.url}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: basic(WEB.writeKey) },
      body,
    });
    const json = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(400);
    expect(json).toMatchObject({ success: false, code: 'message_too_large', limit: 32_768 });
    expect(json.error).toMatch(/counting the batch's context merged into each message/);
    // Memory stays flat: nothing was expanded (allow for the GC's own rhythm). How fast the
    // refusal is belongs to the benchmarks, not here.
    expect((await rss(guarded)) - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a request that would be written as more than 2 MB', async () => {
    const context = { note: 'y'.repeat(8_000) };
    const batch = Array.from({ length: 300 }, (_, n) => ({ type: 'track', userId: `u${n}`, event: 'e' }));
    const { status, json } = await post('/v1/batch', { batch, context });
    expect(status).toBe(400);
    expect(json).toMatchObject({ code: 'request_too_large', limit: 2_000_000 });
  });

  it('refuses a 30,000-character messageId and properties nested 5,000 deep, naming the limits', async () => {
    const long = await post('/v1/track', { userId: 'u', event: 'e', messageId: 'm'.repeat(30_000) });
    expect(long.status).toBe(400);
    expect(long.json.error).toMatch(/messageId is 30000 characters; the limit is 100/);
    // Written as text: JSON.stringify itself overflows the stack on an object this deep.
    const nested = `${'{"n":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    const deep = await post('/v1/track', `{"userId":"u","event":"e","properties":${nested}}`);
    expect(deep.status).toBe(400);
    expect(deep.json).toMatchObject({ code: 'too_deep', limit: 64 });
  });

  it('cuts off a client that trickles its request, and keeps serving others', async () => {
    const socket = connect(guarded.port, '127.0.0.1');
    // Writes after the server closed the connection fail; that is the point.
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nAuthorization: ${basic(WEB.writeKey)}\r\n\r\n{`);
    const started = Date.now();
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
    const trickle = setInterval(() => socket.write(' '), 200);
    try {
      // INGEST_REQUEST_TIMEOUT is 2 s here (30 s by default); Node checks it every second.
      const after = await closed;
      expect(after).toBeLessThan(6_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    const ok = await fetch(`${guarded.url}/v1/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic(WEB.writeKey) },
      body: JSON.stringify({ userId: 'u', event: 'after the trickle' }),
    });
    expect(ok.status).toBe(200);
  });
});
