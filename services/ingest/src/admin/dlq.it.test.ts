/**
 * The dead-letter routes of the real ingest process (dist/main.js) against the real broker
 * and registry: dead letters written to the namespace's dead-letter topic as the
 * dispatcher writes them are listed newest first with their filters, bodies only on
 * request, paged through with the `next` cursor (each dead letter on exactly one page, also
 * among many of the same millisecond), and replayed once to the retry lane with a fresh window
 * — also a replay of thousands, which goes out in several transactions (slices).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { topicNames, type DeadLetter, type Delivery, type TopicNames } from '@tributary/schemas';
import { createProducer, REPLAY_SLICE_LIMITS, type AvroCodec } from '@tributary/shared';
import { eventually, keysRead, readTopicToEnd, stackEnv, startService, testCodec, testDelivery, testKafka, uniqueNamespace, type RunningService } from '@tributary/test/harness';

const TOKEN = 'dlq-admin-token';

let topics: TopicNames;
let kafka: Kafka;
let codec: AvroCodec;
let producer: Producer;
let ingest: RunningService;

beforeAll(async () => {
  const namespace = uniqueNamespace('admin-dlq');
  topics = topicNames(namespace);
  kafka = testKafka();
  codec = testCodec();
  ingest = await startService('ingest', { env: { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN } });
  // The ingest created the topics and registered their schemas; this codec binds to them.
  await codec.register(topics.deadLetters, 'dlq');
  producer = createProducer(kafka);
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  await ingest?.stop();
});

async function call(method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${ingest.url}/admin/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function deadLetter(destinationId: string, messageId: string, reason: string, deadAt: number): DeadLetter {
  const delivery = testDelivery(destinationId, messageId, {
    body: Buffer.from(JSON.stringify({ type: 'track', messageId, properties: { email: 'someone@example.com' } })),
    receivedAt: deadAt - 60_000,
    routedAt: deadAt - 59_990,
    attempts: 6,
    firstAttemptAt: deadAt - 59_000,
    lastError: 'HTTP 503 from webhooks[0] https://hooks.example.com',
    lastStatus: 503,
  });
  return { delivery, reason, status: reason === 'tls' ? null : 503, error: 'HTTP 503 from webhooks[0] https://hooks.example.com', deadAt };
}

const now = Date.now();

describe('the dead-letter admin routes', () => {
  beforeAll(async () => {
    const source = await call('PUT', '/sources/web', { writeKey: 'wk_dlq_admin_0001' });
    expect(source.status).toBe(201);
    for (const [id, enabled] of [['crm', true], ['paused', false]] as const) {
      const destination = await call('PUT', `/destinations/${id}`, {
        type: 'webhooks',
        sources: ['web'],
        enabled,
        settings: { sharedSecret: 'never-shown-secret', webhooks: [{ url: 'https://hooks.example.com/in' }] },
      });
      expect(destination.status).toBe(201);
    }
    const letters = [
      deadLetter('crm', 'm-1', 'expired', now - 7_200_000),
      deadLetter('crm', 'm-2', 'tls', now - 60_000),
      deadLetter('crm', 'm-3', 'expired', now - 30_000),
      deadLetter('paused', 'p-1', 'expired', now - 10_000),
    ];
    await producer.send({ topic: topics.deadLetters, messages: letters.map((letter) => ({ key: letter.delivery.deliveryId, value: codec.encode(topics.deadLetters, letter) })) });
  });

  it('needs the admin token', async () => {
    expect((await call('GET', '/dlq', undefined, null)).status).toBe(401);
    expect((await call('POST', '/dlq/replay', { destination: 'crm' }, 'wrong')).status).toBe(401);
  });

  it('lists newest first without bodies or secrets, filtered by destination, reason and since', async () => {
    const all = await call('GET', '/dlq');
    expect(all.status).toBe(200);
    expect(all.json.order).toBe('newest first');
    expect(all.json.matched).toBe(4);
    const listed = all.json.deadLetters as Array<Record<string, unknown>>;
    expect(listed.map((entry) => entry.messageId)).toEqual(['p-1', 'm-3', 'm-2', 'm-1']);
    expect(listed[1]).toMatchObject({
      deliveryId: 'crm/web/m-3',
      destinationId: 'crm',
      reason: 'expired',
      status: 503,
      attempts: 6,
      replays: 0,
      replayedAt: null,
      deadAt: new Date(now - 30_000).toISOString(),
      firstAttemptAt: new Date(now - 89_000).toISOString(),
    });
    expect(listed[1]!.id).toMatch(/^\d+\/\d+$/);
    expect(JSON.stringify(all.json)).not.toContain('someone@example.com');
    expect(JSON.stringify(all.json)).not.toContain('never-shown-secret');

    const filtered = await call('GET', `/dlq?destination=crm&reason=expired&since=1h&limit=5`);
    expect((filtered.json.deadLetters as Array<Record<string, unknown>>).map((entry) => entry.messageId)).toEqual(['m-3']);
    const limited = await call('GET', '/dlq?destination=crm&limit=1');
    expect([limited.json.matched, (limited.json.deadLetters as unknown[]).length]).toEqual([3, 1]);

    const withBody = await call('GET', '/dlq?destination=crm&reason=tls&body=true');
    const [tls] = withBody.json.deadLetters as Array<Record<string, unknown>>;
    expect(JSON.parse(tls!.body as string)).toEqual({ type: 'track', messageId: 'm-2', properties: { email: 'someone@example.com' } });
    expect(tls!.status).toBeNull();
  });

  it('answers 400 with the path of each bad parameter', async () => {
    const bad = await call('GET', '/dlq?since=yesterday&reason=vanished&limit=0&colour=red');
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_request');
    const paths = (bad.json.issues as Array<{ path: string; message: string }>).map((issue) => issue.path).sort();
    expect(paths).toEqual(['', 'limit', 'reason', 'since']);
    expect(bad.json.error).toContain('since: "yesterday" is not a time');
    expect(bad.json.error).toContain('reason: must be one of: expired, http_status');
    expect(bad.json.error).toContain('unknown field: colour');

    const noDestination = await call('POST', '/dlq/replay', { since: '2024-13-01T00:00:00Z' });
    expect(noDestination.status).toBe(400);
    expect((noDestination.json.issues as Array<{ path: string }>).map((issue) => issue.path).sort()).toEqual(['destination', 'since']);
  });

  it('refuses to replay to a destination that does not exist or is disabled', async () => {
    const missing = await call('POST', '/dlq/replay', { destination: 'nope' });
    expect([missing.status, missing.json.code]).toEqual([404, 'not_found']);
    const disabled = await call('POST', '/dlq/replay', { destination: 'paused' });
    expect([disabled.status, disabled.json.code]).toEqual([409, 'destination_disabled']);
  });

  it('replays once with a fresh window: a dry run writes nothing, a second run skips', async () => {
    const dry = await call('POST', '/dlq/replay', { destination: 'crm', reason: 'expired', dryRun: true });
    expect(dry).toEqual({ status: 200, json: { destination: 'crm', matched: 2, replayed: 2, skipped: 0, dryRun: true } });

    const replay = await call('POST', '/dlq/replay', { destination: 'crm', reason: 'expired' });
    expect(replay.json).toEqual({ destination: 'crm', matched: 2, replayed: 2, skipped: 0, dryRun: false });
    const again = await call('POST', '/dlq/replay', { destination: 'crm' });
    expect(again.json).toEqual({ destination: 'crm', matched: 3, replayed: 1, skipped: 2, dryRun: false });

    // A replay answers once its last slice is committed, and the broker writes the commit markers
    // after that: read until crm's three are there. Their replay markers, in the same
    // transactions, are written with them (one broker writes a transaction's markers together).
    const crm = ['crm/web/m-1', 'crm/web/m-2', 'crm/web/m-3'];
    const records = await readTopicToEnd(kafka, topics.dueRetries, { until: keysRead(crm) });
    const deliveries = await Promise.all(records.map(({ message }) => codec.decode<Delivery>('delivery', message.value!)));
    expect(records.map(({ message }) => message.key?.toString()).sort()).toEqual(crm);
    for (const delivery of deliveries) expect(delivery).toMatchObject({ attempts: 0, firstAttemptAt: null, lastError: null, lastStatus: null, replays: 1 });

    const listed = (await call('GET', '/dlq?destination=crm')).json.deadLetters as Array<Record<string, unknown>>;
    // All three of crm's dead letters are listed (an empty listing would pass the `every`).
    expect(listed.map((entry) => entry.messageId).sort()).toEqual(['m-1', 'm-2', 'm-3']);
    expect(listed.every((entry) => typeof entry.replayedAt === 'string')).toBe(true);
  });
});

describe('paging through dead letters', () => {
  // 20 dead letters in five milliseconds, four of each, spread over both partitions (two of a
  // millisecond on each, so that both partition and offset break ties); every fifth is tls.
  const total = 20;
  const pagedAt = now - 20_000;
  const paged = Array.from({ length: total }, (_, index) => ({
    partition: index % 2,
    letter: deadLetter('pages', `pg-${index}`, index % 5 === 0 ? 'tls' : 'expired', pagedAt - Math.floor(index / 4) * 1_000),
  }));

  type Listed = { id: string; messageId: string; deadAt: string };

  /** Follows `next` from the first page to the last, checking what every page says. */
  async function pageThrough(query: string, limit: number, matched: number): Promise<Listed[][]> {
    const pages: Listed[][] = [];
    let before: string | null = null;
    do {
      const { status, json } = await call('GET', `/dlq?${query}&limit=${limit}${before === null ? '' : `&before=${encodeURIComponent(before)}`}`);
      expect(status).toBe(200);
      expect([json.order, json.matched]).toEqual(['newest first', matched]);
      const page = json.deadLetters as Listed[];
      pages.push(page);
      before = json.next as string | null;
      // A cursor names the last dead letter of its page.
      if (before !== null) expect(before).toBe(`${Date.parse(page.at(-1)!.deadAt)}-${page.at(-1)!.id.replace('/', '-')}`);
      expect(pages.length).toBeLessThanOrEqual(matched);
    } while (before !== null);
    return pages;
  }

  /** Newest first as the API orders: deadAt, then partition, then offset. */
  const newestFirst = (a: Listed, b: Listed) => {
    const [[ap, ao], [bp, bo]] = [a.id.split('/').map(Number), b.id.split('/').map(Number)] as [[number, number], [number, number]];
    return Date.parse(b.deadAt) - Date.parse(a.deadAt) || bp - ap || bo - ao;
  };

  beforeAll(async () => {
    await producer.send({
      topic: topics.deadLetters,
      messages: paged.map(({ partition, letter }) => ({ partition, key: letter.delivery.deliveryId, value: codec.encode(topics.deadLetters, letter) })),
    });
  });

  it('lists every dead letter once across pages of 3, newest first, ties and all', async () => {
    const pages = await pageThrough('destination=pages', 3, total);
    expect(pages.map((page) => page.length)).toEqual([3, 3, 3, 3, 3, 3, 2]);
    const seen = pages.flat();
    expect(seen.map((entry) => entry.messageId).sort()).toEqual(paged.map(({ letter }) => letter.delivery.messageId).sort());
    expect(new Set(seen.map((entry) => entry.id)).size).toBe(total);
    expect(seen).toEqual([...seen].sort(newestFirst));
    // The same dead letters as one page of all of them, in the same order.
    const whole = await call('GET', `/dlq?destination=pages&limit=${total}`);
    expect(whole.json.next).toBeNull();
    expect((whole.json.deadLetters as Listed[]).map((entry) => entry.id)).toEqual(seen.map((entry) => entry.id));
  });

  it('pages within a filter, passed again with every page', async () => {
    const expired = paged.filter(({ letter }) => letter.reason === 'expired').map(({ letter }) => letter.delivery.messageId);
    const pages = await pageThrough('destination=pages&reason=expired', 5, expired.length);
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 1]);
    expect(pages.flat().map((entry) => entry.messageId).sort()).toEqual(expired.sort());
  });

  it('answers 400 naming before for a malformed cursor', async () => {
    const bad = await call('GET', '/dlq?destination=pages&before=not-a-cursor');
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_request');
    expect(bad.json.issues).toEqual([{ path: 'before', message: expect.stringContaining('is not a dead-letter cursor') }]);
  });
});

describe('a replay larger than one slice', () => {
  // Default slices (2,000 dead letters, 4 MiB): 4,500 small dead letters make three.
  const total = 2 * REPLAY_SLICE_LIMITS.records + 500;

  it('sends every delivery to the retry lane exactly once, in slices, and a second replay skips them all', { timeout: 180_000 }, async () => {
    const destination = await call('PUT', '/destinations/bulk', {
      type: 'webhooks',
      sources: ['web'],
      settings: { webhooks: [{ url: 'https://hooks.example.com/bulk' }] },
    });
    expect(destination.status).toBe(201);
    const letters = Array.from({ length: total }, (_, index) => deadLetter('bulk', `b-${index}`, 'expired', now - 5_000));
    for (let start = 0; start < total; start += 500) {
      await producer.send({ topic: topics.deadLetters, messages: letters.slice(start, start + 500).map((letter) => ({ key: letter.delivery.deliveryId, value: codec.encode(topics.deadLetters, letter) })) });
    }

    const started = Date.now();
    const replay = await call('POST', '/dlq/replay', { destination: 'bulk' });
    const tookMs = Date.now() - started;
    expect(replay).toEqual({ status: 200, json: { destination: 'bulk', matched: total, replayed: total, skipped: 0, dryRun: false } });
    const logged = await eventually(
      () =>
        readFileSync(ingest.logFile, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"dead letters replayed"') && line.includes('"destinationId":"bulk"'))
          .map((line) => JSON.parse(line) as { slices: number; replayed: number })[0],
      'the replay logged',
    );
    expect(logged).toMatchObject({ slices: 3, replayed: total });

    // The last slice's commit markers may be written a moment after the answer: read until all are there.
    const records = await readTopicToEnd(kafka, topics.dueRetries, { timeoutMs: 60_000, until: keysRead(letters.map(({ delivery }) => delivery.deliveryId)) });
    const bulk = records.map(({ message }) => message.key?.toString() ?? '').filter((key) => key.startsWith('bulk/'));
    expect(bulk.length).toBe(total);
    expect(new Set(bulk).size).toBe(total);

    const again = await call('POST', '/dlq/replay', { destination: 'bulk' });
    expect(again.json).toEqual({ destination: 'bulk', matched: total, replayed: 0, skipped: total, dryRun: false });
    const after = (await readTopicToEnd(kafka, topics.dueRetries, { timeoutMs: 60_000 })).filter(({ message }) => message.key?.toString().startsWith('bulk/'));
    expect(after.length).toBe(total);
    console.info(`[dlq] replayed ${total} dead letters in ${logged.slices} slices through the admin API in ${tookMs} ms`);
  });
});
