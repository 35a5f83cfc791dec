/**
 * Deletions and audience syncs through the real ingest process: the messages they put on
 * the ingest topic, the membership state on the audiences topic, and that both are
 * written in one transaction (each write ends with a commit marker, and a read_committed
 * reader sees the messages and the state together).
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { topicNames, type AudienceMembership, type IngestMessage, type TopicNames } from '@tributary/schemas';
import { withAdmin, type AvroCodec } from '@tributary/shared';
import { readTopic, readTopicToEnd, stackEnv, startService, testCodec, testKafka, uniqueNamespace, type ConsumedRecord, type RunningService } from '@tributary/test/harness';

const TOKEN = 't';

let topics: TopicNames;
let kafka: Kafka;
let codec: AvroCodec;
let ingest: RunningService;

async function call(method: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${ingest.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Sum of the partitions' end offsets: records plus transaction markers. */
async function endOffset(topic: string): Promise<number> {
  const offsets = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topic));
  return offsets.reduce((sum, { high }) => sum + Number(high), 0);
}

async function ingestMessages(count: number): Promise<Array<IngestMessage & { key: string }>> {
  const records = await readTopic(kafka, topics.ingest, { until: (read) => read.length >= count });
  expect(records).toHaveLength(count);
  return Promise.all(records.map(async (r) => ({ ...(await codec.decode<IngestMessage>('ingest', r.message.value!)), key: r.message.key!.toString() })));
}

async function memberships(records: ConsumedRecord[]): Promise<Map<string, AudienceMembership | null>> {
  const state = new Map<string, AudienceMembership | null>();
  for (const record of records) {
    state.set(record.message.key!.toString(), record.message.value ? await codec.decode<AudienceMembership>('audiences', record.message.value) : null);
  }
  return state;
}

beforeAll(async () => {
  const namespace = uniqueNamespace('admin-events');
  topics = topicNames(namespace);
  kafka = testKafka();
  codec = testCodec();
  ingest = await startService('ingest', { env: { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN } });
  for (const [id, enabled] of [['web', true], ['app', true], ['legacy', false]] as const) {
    expect((await call('PUT', `/sources/${id}`, { writeKey: `wk_events_${id}`, enabled })).status).toBe(201);
  }
});

afterAll(async () => {
  await ingest?.stop();
});

describe('user deletions', () => {
  it('write one delete message per enabled source, in one transaction', async () => {
    const before = await endOffset(topics.ingest);
    const answer = await call('POST', '/deletions', { userId: 'user-to-forget' });
    expect(answer.status).toBe(202);
    const written = answer.json.messages as Array<{ sourceId: string; messageId: string }>;
    expect(written.map((message) => message.sourceId)).toEqual(['app', 'web']);
    expect(answer.json).toMatchObject({ userId: 'user-to-forget', skipped: [] });

    const messages = await ingestMessages(2);
    expect(messages.map((message) => message.messageId).sort()).toEqual(written.map((message) => message.messageId).sort());
    for (const message of messages) {
      expect(message).toMatchObject({ type: 'delete', userId: 'user-to-forget', anonymousId: null, key: 'user-to-forget', traits: null, properties: null });
      expect(message.receivedAt).toBe(message.timestamp);
      expect(Math.abs(message.receivedAt - Date.now())).toBeLessThan(60_000);
    }
    // Two records and one commit marker (both records share the key, so one partition).
    expect(await endOffset(topics.ingest)).toBe(before + 3);
  });

  it('limit to the sources named and skip disabled ones', async () => {
    const answer = await call('POST', '/deletions', { userId: 'someone', sources: ['legacy', 'web'] });
    expect(answer.json).toMatchObject({ skipped: [{ sourceId: 'legacy', reason: 'disabled' }] });
    expect((answer.json.messages as unknown[]).length).toBe(1);
    const unknown = await call('POST', '/deletions', { userId: 'someone', sources: ['ios'] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.issues).toEqual([{ path: 'sources[0]', message: 'unknown source "ios"' }]);
  });
});

describe('audience syncs', () => {
  const audience = 'High Value Users';
  const path = `/audiences/${encodeURIComponent(audience)}/members`;

  it('send an Identify for every member on the first sync, then only the changes', async () => {
    const ingestBefore = await endOffset(topics.ingestOverflow);
    const audiencesBefore = await endOffset(topics.audiences);
    const first = await call('PUT', path, { sourceId: 'web', userIds: ['ann', 'bob', 'cy'] });
    expect(first.json).toEqual({ audience, trait: 'high_value_users', firstSync: true, members: 3, added: 3, removed: 0, changed: 0, unchanged: 0, messages: 3 });

    const second = await call('PUT', path, { sourceId: 'web', userIds: ['bob', 'cy', 'dee'] });
    expect(second.json).toEqual({ audience, trait: 'high_value_users', firstSync: false, members: 3, added: 1, removed: 1, changed: 0, unchanged: 2, messages: 2 });

    const unchanged = await call('PUT', path, { sourceId: 'web', userIds: ['dee', 'cy', 'bob'] });
    expect(unchanged.json).toMatchObject({ added: 0, removed: 0, unchanged: 3, messages: 0 });

    const records = await readTopic(kafka, topics.ingestOverflow, { until: (read) => read.filter((r) => r.message.key && ['ann', 'bob', 'cy', 'dee'].includes(r.message.key.toString())).length >= 5 });
    const identifies = await Promise.all(
      records.filter((r) => ['ann', 'bob', 'cy', 'dee'].includes(r.message.key!.toString())).map(async (r) => codec.decode<IngestMessage>('ingest', r.message.value!)),
    );
    const sent = identifies.map((message) => `${message.userId} ${message.traits}`).sort();
    expect(sent).toEqual([
      'ann {"high_value_users":false}',
      'ann {"high_value_users":true}',
      'bob {"high_value_users":true}',
      'cy {"high_value_users":true}',
      'dee {"high_value_users":true}',
    ]);
    for (const message of identifies) expect(message).toMatchObject({ type: 'identify', sourceId: 'web' });

    const state = await memberships(await readTopic(kafka, topics.audiences, { until: (read) => read.length >= 5 }));
    expect([...state].filter(([, value]) => value?.member).map(([key]) => key).sort()).toEqual([`${audience}/bob`, `${audience}/cy`, `${audience}/dee`]);
    expect(state.get(`${audience}/ann`)).toBeNull();
    expect(state.get(`${audience}/bob`)).toMatchObject({ audience, userId: 'bob', sourceId: 'web', member: true });

    // Each sync that wrote something ended with commit markers: records + one marker per
    // partition it touched, on both topics; the unchanged sync wrote nothing at all.
    const ingestRecords = 5;
    const audienceRecords = 5;
    const ingestMarkers = (await endOffset(topics.ingestOverflow)) - ingestBefore - ingestRecords;
    const audienceMarkers = (await endOffset(topics.audiences)) - audiencesBefore - audienceRecords;
    expect(ingestMarkers).toBeGreaterThanOrEqual(2);
    expect(ingestMarkers).toBeLessThanOrEqual(4);
    expect(audienceMarkers).toBeGreaterThanOrEqual(2);
    expect(audienceMarkers).toBeLessThanOrEqual(4);
  });

  it('keep audiences apart and refuse a disabled source', async () => {
    const other = await call('PUT', `/audiences/${encodeURIComponent('Churn-Risk 30d')}/members`, { sourceId: 'app', userIds: ['bob'] });
    expect(other.json).toMatchObject({ trait: 'churn_risk_30d', firstSync: true, added: 1 });
    const disabled = await call('PUT', `/audiences/${encodeURIComponent('Churn-Risk 30d')}/members`, { sourceId: 'legacy', userIds: [] });
    expect([disabled.status, disabled.json.code]).toEqual([409, 'source_disabled']);
    const bad = await call('PUT', '/audiences/a%2Fb/members', { sourceId: 'web', userIds: [] });
    expect([bad.status, bad.json.issues]).toEqual([400, [{ path: 'name', message: 'may not contain "/"' }]]);
  });

  it('remember the state across a restart of ingest', async () => {
    await ingest.stop();
    ingest = await startService('ingest', { env: { ...stackEnv(topics.namespace), ADMIN_TOKEN: TOKEN } });
    const after = await call('PUT', path, { sourceId: 'web', userIds: ['bob', 'cy', 'dee', 'eve'] });
    expect(after.json).toMatchObject({ firstSync: false, added: 1, removed: 0, unchanged: 3 });
  });

  const ndjson = async (name: string, query: string, lines: string[], gzip = false) => {
    const text = `${lines.join('\n')}\n`;
    const response = await fetch(`${ingest.url}/admin/v1/audiences/${encodeURIComponent(name)}/members?${query}`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/x-ndjson',
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      },
      body: gzip ? gzipSync(text) : text,
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  /**
   * Identify messages on the ingest topic for one trait: `userId → traits JSON` in order. With
   * `messages`, the read goes on until that many are there: a sync answers once its last
   * transaction is committed, and the broker writes the commit markers after that, so a read
   * made at once may end before them.
   */
  const identifiesFor = async (trait: string, messages = 0): Promise<Map<string, string[]>> => {
    const sent = new Map<string, string[]>();
    let decoded = 0;
    let found = 0;
    const collect = async (records: ConsumedRecord[]): Promise<boolean> => {
      for (; decoded < records.length; decoded++) {
        const message = await codec.decode<IngestMessage>('ingest', records[decoded]!.message.value!);
        if (message.type !== 'identify' || !message.traits?.includes(`"${trait}"`)) continue;
        sent.set(message.userId!, [...(sent.get(message.userId!) ?? []), message.traits]);
        found++;
      }
      return found >= messages;
    };
    await collect(await readTopicToEnd(kafka, topics.ingestOverflow, { until: collect, timeoutMs: 30_000 }));
    return sent;
  };

  it('take NDJSON snapshots, gzipped or not, with computed values, and send only what changed', async () => {
    const name = 'Lifetime Value';
    const first = await ndjson(name, 'sourceId=web', ['{"userId":"ann","value":120.5}', '{"userId":"bob","value":"gold"}', '', '{"userId":"cy"}'], true);
    expect(first).toEqual({ status: 200, json: { audience: name, trait: 'lifetime_value', firstSync: true, members: 3, added: 3, removed: 0, changed: 0, unchanged: 0, messages: 3 } });
    const second = await ndjson(name, 'sourceId=web', ['{"userId":"bob","value":"platinum"}', '{"userId":"cy"}', '{"userId":"dee","value":7}']);
    expect(second.json).toMatchObject({ firstSync: false, members: 3, added: 1, removed: 1, changed: 1, unchanged: 1, messages: 3 });
    const sent = await identifiesFor('lifetime_value', 6);
    expect(Object.fromEntries(sent)).toEqual({
      ann: ['{"lifetime_value":120.5}', '{"lifetime_value":null}'],
      bob: ['{"lifetime_value":"gold"}', '{"lifetime_value":"platinum"}'],
      cy: ['{"lifetime_value":true}'],
      dee: ['{"lifetime_value":7}'],
    });
  });

  it('refuse a bad NDJSON line, naming it, and write nothing', async () => {
    const audiencesBefore = await endOffset(topics.audiences);
    const bad = await ndjson('Broken', 'sourceId=web', ['{"userId":"a"}', '{"userId":"b"}', '{"user":"c"}']);
    expect([bad.status, bad.json.code, bad.json.issues]).toEqual([400, 'invalid_request', [{ path: 'line 3', message: 'unknown field "user": a line has "userId" and optionally "value"' }]]);
    const noSource = await ndjson('Broken', '', ['{"userId":"a"}']);
    expect([noSource.status, noSource.json.issues]).toEqual([400, [{ path: 'sourceId', message: 'is required' }]]);
    expect(await endOffset(topics.audiences)).toBe(audiencesBefore);
  });

  it('finish an interrupted sync when it is sent again: nobody twice, nobody lost', { timeout: 120_000 }, async () => {
    const name = 'Interrupted';
    const members = 60_000;
    const lines = Array.from({ length: members }, (_, index) => JSON.stringify({ userId: `member-${index}` }));
    const before = await endOffset(topics.audiences);
    const sync = ndjson(name, 'sourceId=web', lines).catch((error: unknown) => error);
    // Kill ingest once the first transactions are written, well before the last.
    for (let waited = 0; (await endOffset(topics.audiences)) - before < 4_000; waited += 10) {
      if (waited > 60_000) throw new Error('the sync wrote nothing within a minute');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await ingest.kill();
    await sync;
    // Read once the restarted ingest is ready: registering its transactional id (the same
    // INSTANCE_ID) makes the broker finish what the killed one left — write the markers of a
    // commit that had answered, abort a transaction still open — so what is read is settled.
    ingest = await startService('ingest', { env: { ...stackEnv(topics.namespace), ADMIN_TOKEN: TOKEN } });
    const partial = await identifiesFor('interrupted');
    expect(partial.size).toBeGreaterThan(0);
    expect(partial.size).toBeLessThan(members);

    const repeated = await ndjson(name, 'sourceId=web', lines);
    expect(repeated.json).toMatchObject({ firstSync: false, members, added: members - partial.size, unchanged: partial.size });
    const sent = await identifiesFor('interrupted', members);
    expect(sent.size).toBe(members);
    expect([...sent.values()].filter((traits) => traits.length !== 1)).toEqual([]);
  });
});
