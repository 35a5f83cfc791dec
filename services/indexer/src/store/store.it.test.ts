/**
 * The store against both databases it runs on: a real PostgreSQL server (a throwaway
 * cluster) and the embedded PGlite — the same statements, the same answers.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayPostgres, type ThrowawayPostgres } from '@tributary/deploy/postgres';
import { parseAttemptSearch, parseTail, parseTimeline } from '../api/params.js';
import { attemptRow, foldDeliveryStates, messageRow } from '../rows.js';
import type { SqlClient } from '../sql/client.js';
import { openPglite } from '../sql/pglite.js';
import { openPostgres } from '../sql/postgres.js';
import { testAttempt, testConfig, testDestination, testMessage, testSource } from '../test-records.js';
import { migrate } from './migrations.js';
import { DeliveryLogStore } from './store.js';
import type { RowsToWrite } from './write.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await startThrowawayPostgres();
}, 120_000);
afterAll(async () => server?.destroy());

/** A fresh database on the server per test group, so groups never see each other's rows. */
async function freshDatabase(): Promise<string> {
  const name = `t_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return server.urlFor(name);
}

async function freshPostgres(): Promise<SqlClient> {
  return openPostgres({ url: await freshDatabase() });
}

describe('migrations on a PostgreSQL server', () => {
  it('let indexers starting at once take turns: one applies them, the others find them done', async () => {
    const url = await freshDatabase();
    const clients = [openPostgres({ url }), openPostgres({ url }), openPostgres({ url })];
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      expect(applied.filter((versions) => versions.length > 0)).toEqual([[1, 2, 3]]);
      const { rows } = await clients[0]!.query<{ version: number }>('SELECT version FROM delivery_log_migrations ORDER BY version');
      expect(rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });

  it('refuses a schema newer than it knows', async () => {
    const client = openPostgres({ url: await freshDatabase() });
    try {
      await migrate(client);
      await client.query("INSERT INTO delivery_log_migrations (version, name, applied_at) VALUES (99, 'from the future', 0)");
      await expect(migrate(client)).rejects.toThrow(/version 99, newer than this indexer knows/);
    } finally {
      await client.close();
    }
  });
});

const databases: Array<[string, () => Promise<SqlClient>]> = [
  ['PostgreSQL', freshPostgres],
  ['PGlite', () => openPglite(undefined)],
];

const config = testConfig([testSource()], [testDestination('crm'), testDestination('old', { enabled: false })]);
const NOW = Date.parse('2026-11-25T12:00:00.000Z');

/** The rows one batch of attempts (one partition, offsets from `first`) makes. */
function attemptBatch(partition: number, first: number, records: ReturnType<typeof testAttempt>[]): RowsToWrite {
  const attempts = records.map((record, index) => attemptRow(record, partition, first + index));
  return { attempts, messages: [], states: foldDeliveryStates(attempts) };
}

function messageBatch(partition: number, first: number, records: ReturnType<typeof testMessage>[]): RowsToWrite {
  const mapped = records.map((record, index) => messageRow(record, partition, first + index, config));
  return { attempts: [], messages: mapped.map((m) => m.message), states: [] };
}

describe.each(databases)('the delivery log on %s', (_name, open) => {
  let store: DeliveryLogStore;
  beforeAll(async () => {
    store = new DeliveryLogStore(await open());
    expect(await store.migrate()).toEqual([1, 2, 3]);
  }, 60_000);
  afterAll(async () => store?.close());

  it('migrates once: a second run (or a second indexer) finds nothing to do', async () => {
    expect(await store.migrate()).toEqual([]);
    expect(await Promise.all([migrate(store.db), migrate(store.db)])).toEqual([[], []]);
  });

  it('indexes a message with its routing, and each attempt once however often it is written', async () => {
    const messages = messageBatch(0, 10, [testMessage({ messageId: 'm-1', receivedAt: NOW - 60_000 })]);
    expect(await store.write(messages)).toEqual({ attempts: 0, messages: 1, deliveries: 0 });
    expect(await store.write(messages)).toEqual({ attempts: 0, messages: 0, deliveries: 0 });

    const failed = testAttempt({ messageId: 'm-1', destinationId: 'crm', startedAt: NOW - 50_000, receivedAt: NOW - 60_000, outcome: 'retry', status: 503, error: 'HTTP 503', nextAttemptAt: NOW - 40_000, tier: '10s' });
    const delivered = testAttempt({ messageId: 'm-1', destinationId: 'crm', startedAt: NOW - 40_000, receivedAt: NOW - 60_000, attempt: 2, lane: 'retry', durationMs: 20 });
    const batch = attemptBatch(1, 100, [failed, delivered]);
    // Delivered at its second attempt, in the same batch as the first: no delivery row is held.
    expect(await store.write(batch)).toEqual({ attempts: 2, messages: 0, deliveries: 0 });
    expect(await store.write(batch)).toEqual({ attempts: 0, messages: 0, deliveries: 0 });
    // Indexed again from an earlier offset, a batch at a time (a crash before the offsets were
    // committed): the records come again in order, and the delivery ends where it was.
    expect(await store.write(attemptBatch(1, 100, [failed]))).toEqual({ attempts: 0, messages: 0, deliveries: 1 });
    expect(await store.write(attemptBatch(1, 101, [delivered]))).toEqual({ attempts: 0, messages: 0, deliveries: 1 });
    // The failed attempt once more, alone: a held state does not go back.
    expect(await store.write(attemptBatch(1, 100, [failed]))).toEqual({ attempts: 0, messages: 0, deliveries: 0 });
    expect((await store.summary('crm', { since: NOW - 3_600_000, until: NOW })).retriesPending).toBe(0);

    const answer = await store.message('m-1');
    expect(answer).toMatchObject({
      messageId: 'm-1',
      messages: [{ sourceId: 'web', type: 'track', userId: 'u-1', event: 'Signed Up', receivedAt: '2026-11-25T11:59:00.000Z', message: { messageId: 'm-1', properties: { plan: 'pro' }, context: { library: { name: 'test' } } } }],
      routing: [
        { sourceId: 'web', destinationId: 'crm', decision: 'routed', reason: null },
        { sourceId: 'web', destinationId: 'old', decision: 'filtered', reason: 'destination_disabled' },
      ],
      deliveries: [
        {
          deliveryId: 'crm/web/m-1',
          destinationId: 'crm',
          state: 'delivered',
          attempts: 2,
          firstAttemptAt: '2026-11-25T11:59:10.000Z',
          lastAttemptAt: '2026-11-25T11:59:20.000Z',
          lastStatus: 200,
          deliveredAt: '2026-11-25T11:59:20.020Z',
          latencyMs: 20_020,
        },
      ],
    });
    expect(answer?.attempts.map((attempt) => [attempt.id, attempt.outcome, attempt.status])).toEqual([
      ['1-100', 'retry', 503],
      ['1-101', 'delivered', 200],
    ]);
    expect(answer?.attempts[0]).toMatchObject({ nextAttemptAt: '2026-11-25T11:59:20.000Z', tier: '10s', targets: [{ origin: 'https://hooks.example.com', responseBody: 'ok' }] });
    expect(await store.message('nobody')).toBeUndefined();
  });

  it('moves a held delivery to delivered and holds nothing for first successes in the same batch', async () => {
    const failed = testAttempt({ messageId: 'm-held', destinationId: 'crm', startedAt: NOW - 30_000, outcome: 'retry', status: 503, error: 'HTTP 503', nextAttemptAt: NOW - 20_000, tier: '10s' });
    expect(await store.write(attemptBatch(2, 10, [failed]))).toEqual({ attempts: 1, messages: 0, deliveries: 1 });
    expect((await store.summary('crm', { since: NOW - 3_600_000, until: NOW })).retriesPending).toBe(1);
    const firstSuccesses = ['m-a', 'm-b', 'm-c'].map((messageId) => testAttempt({ messageId, destinationId: 'crm', startedAt: NOW - 15_000 }));
    const retried = testAttempt({ messageId: 'm-held', destinationId: 'crm', startedAt: NOW - 10_000, attempt: 2, lane: 'retry' });
    expect(await store.write(attemptBatch(2, 11, [...firstSuccesses, retried]))).toEqual({ attempts: 4, messages: 0, deliveries: 1 });
    expect((await store.summary('crm', { since: NOW - 3_600_000, until: NOW })).retriesPending).toBe(0);
    const { rows } = await store.db.query<{ delivery_id: string; state: string; attempts: number }>(
      "SELECT delivery_id, state, attempts FROM deliveries WHERE delivery_id IN ('crm/web/m-held', 'crm/web/m-a', 'crm/web/m-b', 'crm/web/m-c') ORDER BY delivery_id",
    );
    expect(rows).toEqual([{ delivery_id: 'crm/web/m-held', state: 'delivered', attempts: 2 }]);
  });

  it('keeps a delivery pending until an attempt is seen, whichever topic is indexed first', async () => {
    await store.write(attemptBatch(0, 500, [testAttempt({ messageId: 'm-early', destinationId: 'crm', startedAt: NOW - 1000, outcome: 'dead', status: 400, deadReason: 'http_status' })]));
    await store.write(messageBatch(1, 500, [testMessage({ messageId: 'm-early', receivedAt: NOW - 2000 }), testMessage({ messageId: 'm-waiting', receivedAt: NOW - 2000 })]));
    expect((await store.message('m-early'))?.deliveries[0]?.state).toBe('dead');
    expect((await store.message('m-waiting'))?.deliveries).toMatchObject([{ deliveryId: 'crm/web/m-waiting', state: 'pending', attempts: 0, firstAttemptAt: null }]);
  });

  it('stores what PostgreSQL text would refuse (NUL, lone surrogates): text columns made safe, documents as sent', async () => {
    await store.write(messageBatch(0, 900, [testMessage({ messageId: 'm-nul', event: 'a\u0000b', properties: '{"k\\u0000":"\\ud800x"}' })]));
    const answer = await store.message('m-nul');
    expect(answer?.messages[0]?.event).toBe('a\uFFFDb');
    // The document is kept as sent: JSON can say what a PostgreSQL text cannot.
    expect(answer?.messages[0]?.message.properties).toEqual({ 'k\u0000': '\ud800x' });
  });

  it('searches attempts by every filter, newest first, in cursor pages over many rows', async () => {
    const records = Array.from({ length: 1200 }, (_, index) =>
      testAttempt({
        messageId: `s-${index}`,
        destinationId: index % 2 === 0 ? 'even' : 'odd',
        userId: `user-${index % 3}`,
        // Several share a start time: the cursor must order them by position too.
        startedAt: NOW - 600_000 + Math.floor(index / 4) * 1000,
        outcome: index % 5 === 0 ? 'retry' : 'delivered',
        status: index % 5 === 0 ? (index % 10 === 0 ? 503 : null) : 200,
      }),
    );
    await store.write(attemptBatch(2, 0, records.slice(0, 700)));
    await store.write(attemptBatch(3, 0, records.slice(700)));

    const range = { since: String(NOW - 600_000), until: String(NOW) };
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<DeliveryLogStore['attempts']>> = await store.attempts(parseAttemptSearch({ ...range, destination: 'even', limit: '97', ...(cursor ? { cursor } : {}) }, NOW));
      seen.push(...page.attempts.map((attempt) => attempt.id));
      for (const [a, b] of page.attempts.slice(1).map((attempt, i) => [page.attempts[i]!, attempt] as const)) expect(a.startedAt >= b.startedAt).toBe(true);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(seen).toHaveLength(600);
    expect(new Set(seen).size).toBe(600);
    expect(pages).toBe(Math.ceil(600 / 97));

    const count = async (query: Record<string, string>) => (await store.attempts(parseAttemptSearch({ ...range, limit: '500', ...query }, NOW))).attempts.length;
    expect(await count({ destination: 'odd', status: 'retry' })).toBe(120);
    expect(await count({ status: '503', destination: 'even' })).toBe(120);
    expect(await count({ status: '5xx', destination: 'even' })).toBe(120);
    expect(await count({ status: 'error', destination: 'odd' })).toBe(120);
    expect(await count({ status: '2xx', userId: 'user-1' })).toBe(320);
    expect(await count({ messageId: 's-7' })).toBe(1);
    expect(await count({ source: 'elsewhere' })).toBe(0);
    expect(await count({ since: String(NOW - 10_000), destination: 'even' })).toBe(0);
  });

  it('summarises destinations and draws their timeline, percentiles by percentile_cont', async () => {
    const base = NOW - 3_000_000;
    const records = [
      ...[10, 20, 30, 40].map((duration, i) => testAttempt({ messageId: `p-${i}`, destinationId: 'sum', startedAt: base + i * 1000, receivedAt: base + i * 1000 - 1000, durationMs: duration })),
      testAttempt({ messageId: 'p-5', destinationId: 'sum', startedAt: base + 70_000, outcome: 'retry', status: 500, durationMs: 100, nextAttemptAt: base + 80_000 }),
      testAttempt({ messageId: 'p-6', destinationId: 'sum', startedAt: base + 71_000, kind: 'deferred', outcome: 'deferred', status: null, deferReason: 'circuit_open', targets: [], nextAttemptAt: base + 90_000 }),
      testAttempt({ messageId: 'p-7', destinationId: 'sum', startedAt: base + 72_000, kind: 'preflight', outcome: 'dead', status: null, deadReason: 'destination_disabled', targets: [] }),
    ];
    await store.write(attemptBatch(4, 0, records));
    const range = { since: base, until: base + 120_000 };
    const summary = await store.summary('sum', range);
    expect(summary).toEqual({
      destinationId: 'sum',
      since: new Date(base).toISOString(),
      until: new Date(base + 120_000).toISOString(),
      attempts: 5,
      delivered: 4,
      failed: 1,
      deferred: 1,
      deadLetters: 1,
      successRate: 0.8,
      // receipt → end: 1010, 1020, 1030, 1040 ms
      latency: { deliveryP50Ms: 1025, deliveryP95Ms: 1039, attemptP50Ms: 30, attemptP95Ms: 88 },
      retriesPending: 2,
      circuit: null,
    });
    const all = await store.summaries(['sum', 'never-used'], range);
    expect(all.map((entry) => [entry.destinationId, entry.attempts, entry.successRate])).toEqual([
      ['sum', 5, 0.8],
      ['never-used', 0, null],
    ]);
    expect(await store.destinationSeen('sum')).toBe(true);
    expect(await store.destinationSeen('never-used')).toBe(false);

    const timeline = await store.timeline('sum', parseTimeline({ since: String(base), until: String(base + 120_000), bucket: '1m' }, NOW));
    expect(timeline).toEqual({
      destinationId: 'sum',
      bucketMs: 60_000,
      buckets: [
        { at: new Date(base).toISOString(), attempts: 4, delivered: 4, failed: 0, deferred: 0, deliveryP50Ms: 1025, deliveryP95Ms: 1039 },
        { at: new Date(base + 60_000).toISOString(), attempts: 1, delivered: 0, failed: 1, deferred: 1, deliveryP50Ms: null, deliveryP95Ms: null },
      ],
    });
  });

  it('tails messages newest first, and only newer ones after a cursor', async () => {
    const first = await store.tail(parseTail({ limit: '2' }));
    expect(first.messages.map((m) => m.messageId)).toHaveLength(2);
    expect(first.messages[0]?.messageId).toBe('m-nul');
    const none = await store.tail(parseTail({ after: first.cursor }));
    expect(none.messages).toEqual([]);
    expect(none.cursor).toBe(first.cursor);
    await store.write(messageBatch(0, 1000, [testMessage({ messageId: 't-1' }), testMessage({ messageId: 't-2', sourceId: 'app' })]));
    const newer = await store.tail(parseTail({ after: first.cursor }));
    expect(newer.messages.map((m) => m.messageId)).toEqual(['t-2', 't-1']);
    expect((await store.tail(parseTail({ after: first.cursor, source: 'app' }))).messages.map((m) => m.messageId)).toEqual(['t-2']);
    expect((await store.tail(parseTail({ after: newer.cursor }))).messages).toEqual([]);
  });

  it('deletes what is past retention in bounded batches, and nothing newer', async () => {
    const old = NOW - 10 * 86_400_000;
    await store.write(attemptBatch(5, 0, Array.from({ length: 25 }, (_, i) => testAttempt({ messageId: `old-${i}`, destinationId: 'crm', startedAt: old + i, receivedAt: old, outcome: 'retry', status: 503 }))));
    await store.write(messageBatch(5, 0, Array.from({ length: 5 }, (_, i) => testMessage({ messageId: `old-${i}`, receivedAt: old }))));
    const cutoff = NOW - 7 * 86_400_000;
    expect(await store.deleteExpired(cutoff, 10)).toEqual({ attempts: 10, messages: 5, deliveries: 10 });
    expect(await store.deleteExpired(cutoff, 10)).toEqual({ attempts: 10, messages: 0, deliveries: 10 });
    expect(await store.deleteExpired(cutoff, 10)).toEqual({ attempts: 5, messages: 0, deliveries: 5 });
    expect(await store.deleteExpired(cutoff, 10)).toEqual({ attempts: 0, messages: 0, deliveries: 0 });
    expect(await store.message('old-1')).toBeUndefined();
    expect(await store.message('m-1')).toBeDefined();
  });
});
