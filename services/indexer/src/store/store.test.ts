/**
 * The store on PGlite in memory (the embedded database `npm start` uses): what the read API's
 * queries return and how PGlite plans them. The same against PostgreSQL: store.it.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTailCursor } from '../api/cursor.js';
import { parseTail } from '../api/params.js';
import { attemptRow, foldDeliveryStates } from '../rows.js';
import { openPglite } from '../sql/pglite.js';
import { testAttempt } from '../test-records.js';
import { MESSAGE_DETAIL_LIMIT, tailSql } from './queries.js';
import { DeliveryLogStore } from './store.js';

const T = 1_764_064_800_000;
let store: DeliveryLogStore;

beforeAll(async () => {
  store = new DeliveryLogStore(await openPglite(undefined));
  expect(await store.migrate()).toEqual([1, 2, 3]);
});
afterAll(async () => store.close());

describe('the live tail of one source', () => {
  it('is read from messages_by_source_seq, not by walking every message', async () => {
    await store.db.query(`INSERT INTO messages (source_id, message_id, type, received_at, event_timestamp, message, routing, kafka_partition, kafka_offset)
      SELECT 'web', 'm' || g, 'track', ${T} + g, ${T} + g, '{}'::json, '[]'::json, 0, g FROM generate_series(1, 20000) g`);
    await store.db.query(`INSERT INTO messages (source_id, message_id, type, received_at, event_timestamp, message, routing, kafka_partition, kafka_offset)
      SELECT 'app', 'a' || g, 'track', ${T} + g, ${T} + g, '{}'::json, '[]'::json, 1, g FROM generate_series(1, 100) g`);
    await store.db.query('ANALYZE messages');
    // A source with no message, and one with a few among many: what the console opens on.
    for (const query of [{ source: 'quiet' }, { source: 'app' }, { source: 'app', after: encodeTailCursor(20_050) }]) {
      const tail = tailSql(parseTail(query));
      const { rows } = await store.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${tail.text}`, tail.params);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan, plan).toContain('messages_by_source_seq');
      expect(plan, plan).not.toMatch(/Seq Scan|messages_by_seq /);
    }
    expect((await store.tail(parseTail({ source: 'quiet' }))).messages).toEqual([]);
    expect((await store.tail(parseTail({ source: 'app', limit: '2' }))).messages.map((message) => message.messageId)).toEqual(['a100', 'a99']);
  });
});

describe("a message's detail", () => {
  it('holds the newest attempts, oldest first, and says when older ones were left out', async () => {
    const extra = 5;
    const records = Array.from({ length: MESSAGE_DETAIL_LIMIT + extra }, (_, index) => {
      const last = index === MESSAGE_DETAIL_LIMIT + extra - 1;
      return testAttempt({ messageId: 'busy', destinationId: 'crm', startedAt: T + index * 1000, attempt: index + 1, outcome: last ? 'delivered' : 'retry', status: last ? 200 : 503 });
    });
    const attempts = records.map((record, index) => attemptRow(record, 0, 100_000 + index));
    await store.write({ attempts, messages: [], states: foldDeliveryStates(attempts) });

    const detail = await store.message('busy');
    expect(detail?.attempts).toHaveLength(MESSAGE_DETAIL_LIMIT);
    // The newest kept, the oldest left out, in the order the API answers: oldest first.
    expect(detail?.attempts[0]?.attempt).toBe(extra + 1);
    expect(detail?.attempts.at(-1)?.attempt).toBe(MESSAGE_DETAIL_LIMIT + extra);
    expect(detail?.truncated).toBe(true);
    // Folded from the newest attempts: the delivery that ended delivered says so.
    expect(detail?.deliveries).toEqual([expect.objectContaining({ destinationId: 'crm', state: 'delivered', attempts: MESSAGE_DETAIL_LIMIT + extra })]);

    const few = [attemptRow(testAttempt({ messageId: 'calm', destinationId: 'crm', startedAt: T }), 1, 1)];
    await store.write({ attempts: few, messages: [], states: foldDeliveryStates(few) });
    expect(await store.message('calm')).not.toHaveProperty('truncated');
  });
});
