/**
 * The admin API of the real ingest process (dist/main.js) against the real broker and
 * registry: authentication, the CRUD round trip, validation answers with paths, secrets
 * that never come back, idempotent applies that write nothing the second time, and
 * changes that another service's config view sees within a second.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { topicNames, type ConfigEntry, type Destination, type TopicNames } from '@tributary/schemas';
import { ConfigView, withAdmin, type AvroCodec } from '@tributary/shared';
import { readTopic, stackEnv, startService, testCodec, testKafka, testLogger, uniqueNamespace, type RunningService } from '@tributary/test/harness';

const TOKEN = 't';
const SECRET = 'sh4red-secret-never-shown';

let namespace: string;
let topics: TopicNames;
let kafka: Kafka;
let codec: AvroCodec;
let ingest: RunningService;

beforeAll(async () => {
  namespace = uniqueNamespace('admin');
  topics = topicNames(namespace);
  kafka = testKafka();
  codec = testCodec();
  ingest = await startService('ingest', { env: { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN } });
});

afterAll(async () => {
  await ingest?.stop();
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${ingest.url}/admin/v1${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function configEndOffset(): Promise<number> {
  const offsets = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topics.config));
  return offsets.reduce((sum, { high }) => sum + Number(high), 0);
}

const destinationBody = (overrides: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) => ({
  type: 'webhooks',
  sources: ['web'],
  ...overrides,
  settings: { sharedSecret: SECRET, webhooks: [{ url: 'https://hooks.example.com/segment', headers: { 'X-Team': 'growth' } }], ...settings },
});

describe('authentication', () => {
  it('answers 401 JSON with a Bearer challenge without a token, with a wrong one, or with another scheme', async () => {
    const missing = await call('GET', '/sources', undefined, null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="tributary-admin"');
    expect(missing.json).toMatchObject({ code: 'unauthorized', issues: [] });

    const wrong = await call('GET', '/sources', undefined, 'not-the-token');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="tributary-admin", error="invalid_token"');
    expect(wrong.json).toMatchObject({ code: 'invalid_token', error: 'the admin token is not valid' });

    const basic = await fetch(`${ingest.url}/admin/v1/sources`, { headers: { authorization: `Basic ${Buffer.from('t:').toString('base64')}` } });
    expect(basic.status).toBe(401);

    const writeAttempt = await call('POST', '/sources', { id: 'sneaky', writeKey: 'wk_sneaky_01' }, 'wrong');
    expect(writeAttempt.status).toBe(401);
    expect((await call('GET', '/sources/sneaky')).status).toBe(404);
  });

  it('serves the OpenAPI document without a token', async () => {
    const document = await call('GET', '/openapi.json', undefined, null);
    expect(document.status).toBe(200);
    expect(document.json).toMatchObject({ openapi: '3.1.0' });
    expect(Object.keys(document.json.paths as object)).toContain('/destinations/{id}');
  });

  it('answers unknown admin routes with a JSON 404', async () => {
    const unknown = await call('GET', '/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error: 'no admin route GET /admin/v1/nothing-here; see /admin/v1/openapi.json', code: 'not_found', issues: [] });
  });
});

describe('sources and destinations', () => {
  it('go through a create, read, replace, delete round trip', async () => {
    const created = await call('POST', '/sources', { id: 'web', name: 'Web site', writeKey: 'wk_admin_web_01' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/admin/v1/sources/web');
    expect(created.json).toEqual({ id: 'web', name: 'Web site', writeKey: 'wk_admin_web_01', enabled: true });
    expect((await call('POST', '/sources', { id: 'web', writeKey: 'wk_admin_web_02' })).json).toMatchObject({ code: 'already_exists' });

    const replaced = await call('PUT', '/sources/web', { name: 'Web', writeKey: 'wk_admin_web_01' });
    expect([replaced.status, replaced.json.name]).toEqual([200, 'Web']);
    expect((await call('PUT', '/sources/app', { writeKey: 'wk_admin_app_01' })).status).toBe(201);
    expect((await call('GET', '/sources')).json).toEqual({
      sources: [
        { id: 'app', name: 'app', writeKey: 'wk_admin_app_01', enabled: true },
        { id: 'web', name: 'Web', writeKey: 'wk_admin_web_01', enabled: true },
      ],
    });

    const destination = await call('POST', '/destinations', destinationBody({ id: 'crm', sources: ['web', 'app'] }));
    expect(destination.status).toBe(201);
    expect(destination.json).toEqual({
      id: 'crm',
      name: 'crm',
      type: 'webhooks',
      sources: ['web', 'app'],
      enabled: true,
      settings: { sharedSecret: '[redacted]', standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/segment', headers: { 'X-Team': '[redacted]' } }] },
    });

    const inUse = await call('DELETE', '/sources/app');
    expect(inUse.status).toBe(409);
    expect(inUse.json).toEqual({
      error: 'source "app" is used by destination "crm"; remove it from their sources first',
      code: 'source_in_use',
      issues: [],
      destinations: ['crm'],
    });

    const disabled = await call('PUT', '/destinations/crm', destinationBody({ sources: ['web'], enabled: false }, { sharedSecret: '[redacted]' }));
    expect([disabled.status, disabled.json.enabled, disabled.json.sources]).toEqual([200, false, ['web']]);
    expect((await call('DELETE', '/sources/app')).status).toBe(204);
    expect((await call('GET', '/sources/app')).json).toEqual({ error: 'source "app" does not exist', code: 'not_found', issues: [] });
    expect((await call('DELETE', '/sources/app')).status).toBe(404);

    expect((await call('DELETE', '/destinations/crm')).status).toBe(204);
    expect((await call('GET', '/destinations/crm')).status).toBe(404);
    expect((await call('GET', '/destinations')).json).toEqual({ destinations: [] });
  });

  it('refuse invalid input with 400 and the path of each problem', async () => {
    const six = await call('PUT', '/destinations/too-many', destinationBody({}, { webhooks: Array.from({ length: 6 }, (_, i) => ({ url: `https://hooks.example.com/${i}` })) }));
    expect(six.status).toBe(400);
    expect(six.json).toEqual({
      error: 'invalid destination: settings.webhooks[5]: at most 5 webhook URLs per destination',
      code: 'invalid_request',
      issues: [{ path: 'settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' }],
    });

    const headers = await call('POST', '/destinations', destinationBody({ id: 'bad-headers', sources: ['nope'] }, { webhooks: [{ url: 'ftp://x.example/a', headers: { Host: 'evil', 'X-Ok': 'a\r\nX-Injected: 1' } }] }));
    expect(headers.status).toBe(400);
    expect(headers.json.issues).toEqual([
      { path: 'settings.webhooks[0].url', message: 'must use http or https, not ftp' },
      { path: 'settings.webhooks[0].headers.Host', message: '"Host" is set by Tributary and cannot be a static header' },
      { path: 'settings.webhooks[0].headers.X-Ok', message: 'header values may not contain CR, LF or NUL' },
    ]);

    expect((await call('POST', '/destinations', destinationBody({ id: 'orphan', sources: ['nope'] }))).json.issues).toEqual([{ path: 'sources[0]', message: 'unknown source "nope"' }]);
    expect((await call('PUT', '/sources/web', { id: 'other', writeKey: 'wk_admin_web_01' })).json.issues).toEqual([{ path: 'id', message: 'must match the id in the URL ("web")' }]);

    const malformed = await call('POST', '/sources', '{"id": "x",');
    expect([malformed.status, malformed.json.code]).toEqual([400, 'invalid_json']);
    const notJson = await fetch(`${ingest.url}/admin/v1/sources`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' }, body: 'id,writeKey' });
    expect(notJson.status).toBe(415);
    expect(await notJson.json()).toMatchObject({ code: 'unsupported_media_type', issues: [] });
  });

  it('never return or log a shared secret, and keep it when a write sends the marker back', async () => {
    await call('PUT', '/destinations/signed', destinationBody());
    const reads = [await call('GET', '/destinations/signed'), await call('GET', '/destinations'), await call('GET', '/config')];
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(SECRET);
      expect(read.text).toContain('"sharedSecret":"[redacted]"');
    }
    await call('PUT', '/destinations/signed', destinationBody({ name: 'Signed' }, { sharedSecret: '[redacted]' }));

    const records = await readTopic(kafka, topics.config, { until: (read) => read.filter((r) => r.message.key?.toString() === 'destination/signed').length >= 2 });
    const stored = await Promise.all(
      records.filter((r) => r.message.key?.toString() === 'destination/signed').map(async (r) => (await codec.decode<ConfigEntry>('config', r.message.value!)).entity as Destination),
    );
    expect(stored.map((entity) => [entity.name, entity.settings.sharedSecret])).toEqual([
      ['signed', SECRET],
      ['Signed', SECRET],
    ]);
    const log = readFileSync(ingest.logFile, 'utf8');
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('wk_admin_web_01');
  });
});

describe('declarative apply', () => {
  const document = {
    sources: [{ id: 'shop', name: 'Shop', writeKey: 'wk_admin_shop_1' }],
    destinations: [
      {
        id: 'shop-hooks',
        type: 'webhooks',
        sources: ['shop'],
        settings: { sharedSecret: 'apply-secret', webhooks: [{ url: 'https://hooks.example.com/shop', headers: { 'X-Shop': 1 } }] },
      },
    ],
  };

  it('shows a dry run, applies once, and writes nothing when applied again', async () => {
    const before = await configEndOffset();
    const dry = await call('POST', '/config/apply', { document, dryRun: true });
    expect(dry.json).toEqual({
      changes: [
        { action: 'create', kind: 'source', id: 'shop' },
        { action: 'create', kind: 'destination', id: 'shop-hooks' },
      ],
      applied: false,
      written: 0,
    });
    expect(await configEndOffset()).toBe(before);
    expect((await call('GET', '/sources/shop')).status).toBe(404);

    const applied = await call('POST', '/config/apply', { document });
    expect(applied.json).toMatchObject({ applied: true, written: 2 });
    expect((await call('GET', '/destinations/shop-hooks')).json).toMatchObject({ settings: { sharedSecret: '[redacted]', webhooks: [{ headers: { 'X-Shop': '[redacted]' } }] } });
    const afterFirst = await configEndOffset();
    expect(afterFirst).toBe(before + 2);

    const again = await call('POST', '/config/apply', { document });
    expect(again.json).toEqual({ changes: [], applied: true, written: 0 });
    expect(await configEndOffset()).toBe(afterFirst);

    // What a read shows, applied back, is no change either: the redacted secret is kept.
    const exported = (await call('GET', '/config')).json;
    expect((await call('POST', '/config/apply', { document: exported })).json).toEqual({ changes: [], applied: true, written: 0 });
    expect(await configEndOffset()).toBe(afterFirst);
  });

  it('reports changed fields and prunes only when asked', async () => {
    const changed = { ...document, destinations: [{ ...document.destinations[0], enabled: false, settings: { ...document.destinations[0]!.settings, sharedSecret: 'rotated' } }] };
    expect((await call('POST', '/config/apply', { document: changed, dryRun: true })).json.changes).toEqual([
      { action: 'update', kind: 'destination', id: 'shop-hooks', fields: ['enabled', 'settings.sharedSecret'] },
    ]);
    const pruned = await call('POST', '/config/apply', { document: { sources: document.sources }, dryRun: true, prune: true });
    const deletions = (pruned.json.changes as Array<{ action: string; kind: string; id: string }>).filter((change) => change.action === 'delete');
    expect(deletions.map((change) => `${change.kind} ${change.id}`)).toEqual(['destination shop-hooks', 'destination signed', 'source web']);
  });

  it('refuses an invalid document with paths relative to it, writing nothing', async () => {
    const before = await configEndOffset();
    const bad = await call('POST', '/config/apply', {
      document: { sources: [{ id: 'x', writeKey: 'short' }], destinations: [{ id: 'y', type: 'webhooks', sources: [], settings: { webhooks: [] } }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.issues).toEqual([
      { path: 'sources[0].writeKey', message: 'must be at least 8 characters' },
      { path: 'destinations[0].settings.webhooks', message: 'needs at least one webhook URL' },
    ]);
    expect((await call('POST', '/config/apply', { dryRun: true })).json.issues).toEqual([{ path: 'document', message: 'is required' }]);
    expect(await configEndOffset()).toBe(before);
  });
});

describe('another service', () => {
  it('sees a destination added, changed and disabled within one second of the answer', async () => {
    const view = new ConfigView({ kafka, codec, logger: testLogger('router-like'), topic: topics.config, groupPrefix: `${namespace}-it` });
    await view.start();
    try {
      // Resolves with the time the view first satisfies `check`.
      const visible = (check: () => boolean) =>
        new Promise<number>((resolve) => {
          if (check()) return resolve(Date.now());
          const stop = view.onChange(() => {
            if (check()) {
              stop();
              resolve(Date.now());
            }
          });
        });
      const steps: Array<[unknown, (destination: Destination | undefined) => boolean]> = [
        [destinationBody({}, { sharedSecret: null }), (d) => d !== undefined],
        [destinationBody({}, { sharedSecret: null, webhooks: [{ url: 'https://changed.example.com/x' }] }), (d) => d?.settings.webhooks[0]?.url === 'https://changed.example.com/x'],
        [destinationBody({ enabled: false }, { sharedSecret: null, webhooks: [{ url: 'https://changed.example.com/x' }] }), (d) => d?.enabled === false],
      ];
      for (const [body, check] of steps) {
        const seen = visible(() => check(view.destination('live')));
        expect((await call('PUT', '/destinations/live', body)).status).toBeLessThan(300);
        // From the answer, as the promise is worded: the call's own time (a write the broker
        // acknowledged) is not the propagation's. Seen before the answer counts as at once.
        const answeredAt = Date.now();
        const seenAt = await Promise.race([seen, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 1000))]);
        expect(seenAt - answeredAt).toBeLessThan(1000);
      }
    } finally {
      await view.stop();
    }
  });
});

describe('without ADMIN_TOKEN', () => {
  it('answers every /admin URL with a JSON 404 saying the admin API is disabled', async () => {
    const disabled = await startService('ingest', { env: stackEnv(namespace) });
    try {
      for (const path of ['/admin/v1/sources', '/admin/v1/openapi.json', '/admin']) {
        const response = await fetch(`${disabled.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({
          error: 'the admin API is disabled: set ADMIN_TOKEN on the ingest service to enable it',
          code: 'admin_disabled',
          issues: [],
        });
      }
      expect(readFileSync(disabled.logFile, 'utf8')).toContain('admin API disabled: ADMIN_TOKEN is not set');
    } finally {
      await disabled.stop();
    }
  });
});
