/**
 * The config routes through the real admin plugin (bearer check, error shape) and a real
 * ConfigStore, over a config topic kept in memory whose reader always keeps up.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProducerRecord } from 'kafkajs';
import type { ConfigEntry, Destination, Source } from '@tributary/schemas';
import { createHttpServer, createLogger, createMetrics, createReadiness, isDestination, type ConfigState, type HttpServer } from '@tributary/shared';
import { ConfigStore } from './config-store.js';
import { loadAdminOpenApi } from './openapi.js';
import { registerAdminApi } from './plugin.js';
import { configRoutes } from './config-routes.js';
import { testAdminDeps } from './test-deps.js';

const TOKEN = 'tok-0123456789abcdef';

let app: HttpServer;
let stored: Map<string, Source | Destination>;

const state = (): ConfigState => {
  const all = [...stored.values()];
  return { sources: all.filter((entity): entity is Source => !isDestination(entity)), destinations: all.filter(isDestination) };
};

beforeEach(async () => {
  stored = new Map();
  const logger = createLogger({ service: 'test', level: 'silent' });
  const config = new ConfigStore({
    view: { state, reader: { catchUpToEnd: async () => undefined } },
    producer: {
      send: async ({ messages }: ProducerRecord) => {
        for (const { key, value } of messages) {
          if (value) stored.set(String(key), JSON.parse(value.toString()) as Source | Destination);
          else stored.delete(String(key));
        }
        return [];
      },
    },
    codec: { encode: (_topic: string, value: unknown) => Buffer.from(JSON.stringify((value as ConfigEntry).entity)) },
    topic: 'acme.config',
    logger,
    timeoutMs: 1_000,
  });
  app = createHttpServer({ logger, metrics: createMetrics('ingest-config-routes'), readiness: createReadiness() });
  const deps = testAdminDeps({ token: TOKEN, config });
  registerAdminApi(app, { ...deps, logger, openapi: loadAdminOpenApi(), routes: [configRoutes] });
  await app.ready();
  await call('PUT', '/sources/web', { writeKey: 'wk_web_0001' });
});

afterEach(async () => {
  await app.close();
});

async function call(method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await app.inject({
    method,
    url: `/admin/v1${path}`,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: response.statusCode, json: response.json<Record<string, unknown>>() };
}

const hooks = (webhooks: unknown[], extra: Record<string, unknown> = {}) => ({ type: 'webhooks', sources: ['web'], settings: { webhooks }, ...extra });

describe('POST /config/apply', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'must be an object with "sources" and "destinations" lists'],
    ['a string', 'sources: []', 'must be an object with "sources" and "destinations" lists'],
    ['a list', [], 'must be an object with "sources" and "destinations" lists'],
  ])('refuses a document that is %s, even with prune, and deletes nothing', async (_case, document, message) => {
    await call('PUT', '/destinations/crm', hooks([{ url: 'https://hooks.example.com/a' }]));
    const refused = await call('POST', '/config/apply', { document, prune: true });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'invalid_request', issues: [{ path: 'document', message }] });
    expect([...stored.keys()].sort()).toEqual(['destination/crm', 'source/web']);
  });

  it('refuses a request without a document', async () => {
    expect((await call('POST', '/config/apply', { prune: true })).json).toMatchObject({ issues: [{ path: 'document', message: 'is required' }] });
  });

  it('prunes everything for an explicit document with empty lists, as asked', async () => {
    const applied = await call('POST', '/config/apply', { document: { sources: [], destinations: [] }, prune: true });
    expect(applied.json).toEqual({ changes: [{ action: 'delete', kind: 'source', id: 'web' }], applied: true, written: 1 });
    expect(stored.size).toBe(0);
  });
});

describe('PUT /destinations/:id', () => {
  it('refuses a destination without sources, leaving the stored one connected', async () => {
    await call('PUT', '/destinations/crm', hooks([{ url: 'https://hooks.example.com/a' }]));
    const refused = await call('PUT', '/destinations/crm', { type: 'webhooks', settings: { webhooks: [{ url: 'https://hooks.example.com/a' }] } });
    expect(refused.status).toBe(400);
    expect(refused.json.issues).toEqual([{ path: 'sources', message: 'is required: the ids of the sources this destination receives from ([] for none)' }]);
    expect((stored.get('destination/crm') as Destination).sources).toEqual(['web']);
    expect((await call('PUT', '/destinations/crm', hooks([{ url: 'https://hooks.example.com/a' }], { sources: [] }))).status).toBe(200);
  });

  it("does not carry one URL's redacted header value to another URL", async () => {
    await call('PUT', '/destinations/crm', hooks([
      { url: 'https://a.example.com/hook', headers: { Authorization: 'Bearer token-for-A' } },
      { url: 'https://b.example.com/hook', headers: { Authorization: 'Bearer token-for-B' } },
    ]));
    const read = (await call('GET', '/destinations/crm')).json as unknown as Destination;
    // Drop A, move B to a new host, send back what the read showed.
    const moved = { ...read, settings: { ...read.settings, webhooks: [{ url: 'https://new-b.example.net/hook', headers: read.settings.webhooks[1]!.headers }] } };
    const refused = await call('PUT', '/destinations/crm', moved);
    expect(refused.status).toBe(400);
    expect(refused.json.issues).toEqual([{ path: 'settings.webhooks[0].headers.Authorization', message: expect.stringContaining('send the value again') as unknown as string }]);
    expect((stored.get('destination/crm') as Destination).settings.webhooks.map((entry) => [entry.url, entry.headers.Authorization])).toEqual([
      ['https://a.example.com/hook', 'Bearer token-for-A'],
      ['https://b.example.com/hook', 'Bearer token-for-B'],
    ]);
    // Kept where the URL is the same.
    const kept = { ...read, settings: { ...read.settings, webhooks: [read.settings.webhooks[1]] } };
    expect((await call('PUT', '/destinations/crm', kept)).status).toBe(200);
    expect((stored.get('destination/crm') as Destination).settings.webhooks).toEqual([{ url: 'https://b.example.com/hook', headers: { Authorization: 'Bearer token-for-B' } }]);
  });
});
