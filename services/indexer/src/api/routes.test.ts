import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, createLogger, createMetrics, createReadiness, type HttpServer } from '@tributary/shared';
import type { DeliveryLogStore } from '../store/store.js';
import { registerReadApi } from './routes.js';

const logger = createLogger({ service: 'test', level: 'silent' });
let app: HttpServer | undefined;

function server(token: string | undefined, store: Partial<DeliveryLogStore> | undefined, retentionMs?: number): HttpServer {
  app = createHttpServer({ logger, metrics: createMetrics('test'), readiness: createReadiness() });
  registerReadApi(app, { token, store: () => store as DeliveryLogStore | undefined, destinationIds: () => ['crm'], logger, ...(retentionMs === undefined ? {} : { retentionMs }) });
  return app;
}

const auth = { authorization: 'Bearer t0ken' };

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('the read API', () => {
  it('is off without a token: 404 admin_disabled on every admin URL', async () => {
    const response = await server(undefined, {}).inject({ url: '/admin/v1/attempts' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'admin_disabled', issues: [] });
  });

  it('needs the bearer token', async () => {
    const response = await server('t0ken', {}).inject({ url: '/admin/v1/attempts', headers: { authorization: 'Bearer nope' } });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toContain('invalid_token');
  });

  it('answers 503 delivery_log_unavailable while the database is not open, or failing', async () => {
    expect((await server('t0ken', undefined).inject({ url: '/admin/v1/messages', headers: auth })).json()).toMatchObject({ code: 'delivery_log_unavailable' });
    await app?.close();
    const failing = { tail: async () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) };
    const response = await server('t0ken', failing).inject({ url: '/admin/v1/messages', headers: auth });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'delivery_log_unavailable', issues: [] });
  });

  it('refuses a bad parameter with 400 naming it, an unknown message or destination with 404', async () => {
    const store = { message: async () => undefined, destinationSeen: async () => false };
    const api = server('t0ken', store);
    const bad = await api.inject({ url: '/admin/v1/attempts?status=weird', headers: auth });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'status' }] });
    expect((await api.inject({ url: '/admin/v1/messages/m-1', headers: auth })).json()).toMatchObject({ code: 'not_found' });
    expect((await api.inject({ url: '/admin/v1/destinations/gone/summary', headers: auth })).statusCode).toBe(404);
    expect((await api.inject({ url: '/admin/v1/nothing-here', headers: auth })).json()).toMatchObject({ code: 'not_found' });
  });

  it('answers 400 when the database refuses a value as data, not 503', async () => {
    const refusing = { tail: async () => Promise.reject(Object.assign(new Error('value "3000000000" is out of range for type integer'), { code: '22003' })) };
    const response = await server('t0ken', refusing).inject({ url: '/admin/v1/messages', headers: auth });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'bad_request' });
  });

  it('looks up an id with a NUL as it was stored (U+FFFD), and refuses a time no date holds with 400', async () => {
    let asked = '';
    const store = { message: async (id: string) => ((asked = id), undefined) };
    const api = server('t0ken', store as unknown as Partial<DeliveryLogStore>);
    expect((await api.inject({ url: '/admin/v1/messages/a%00b', headers: auth })).statusCode).toBe(404);
    expect(asked).toBe('a\uFFFDb');
    const far = await api.inject({ url: '/admin/v1/delivery-summary?until=9999999999999999', headers: auth });
    expect(far.statusCode).toBe(400);
    expect(far.json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'until' }] });
  });

  it('takes a message id with a slash, URL-encoded', async () => {
    let asked = '';
    const store = { message: async (id: string) => ((asked = id), undefined) };
    await server('t0ken', store as unknown as Partial<DeliveryLogStore>).inject({ url: '/admin/v1/messages/a%2Fb%20c', headers: auth });
    expect(asked).toBe('a/b c');
  });

  it('finds the messages . and .. by query, which no path can carry', async () => {
    const asked: string[] = [];
    const store = { message: async (id: string) => (asked.push(id), undefined) };
    const api = server('t0ken', store as unknown as Partial<DeliveryLogStore>);
    for (const id of ['.', '..']) {
      const response = await api.inject({ url: `/admin/v1/messages/by-id?messageId=${encodeURIComponent(id)}`, headers: auth });
      expect(response.json()).toMatchObject({ code: 'not_found', error: `message "${id}" is not in the delivery log (not indexed yet, or past retention)` });
    }
    await api.inject({ url: '/admin/v1/messages/by-id', headers: auth });
    expect(asked).toEqual(['.', '..', 'by-id']);
    expect((await api.inject({ url: '/admin/v1/messages/m-1?messageId=m-2', headers: auth })).json()).toMatchObject({ code: 'validation_failed', issues: [{ path: 'messageId' }] });
  });

  it("refuses a parameter named after Object.prototype's properties as unknown", async () => {
    const store = { tail: async () => ({ messages: [], cursor: 'c' }), attempts: async () => ({ attempts: [], nextCursor: null }) };
    const api = server('t0ken', store as unknown as Partial<DeliveryLogStore>);
    for (const url of ['/admin/v1/attempts?constructor=1', '/admin/v1/attempts?toString=x', '/admin/v1/messages?__proto__=1']) {
      const response = await api.inject({ url, headers: auth });
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toMatchObject({ code: 'validation_failed', issues: [{ message: expect.stringMatching(/unknown query parameter/) }] });
    }
  });

  it('reads ranges from no earlier than the retention horizon', async () => {
    let asked: { since: number; until: number } | undefined;
    const store = { summaries: async (_ids: readonly string[], range: { since: number; until: number }) => ((asked = range), []) };
    const before = Date.now();
    await server('t0ken', store as unknown as Partial<DeliveryLogStore>, 60_000).inject({ url: '/admin/v1/delivery-summary?since=0', headers: auth });
    expect(asked!.until - asked!.since).toBe(60_000);
    expect(asked!.since).toBeGreaterThanOrEqual(before - 60_000);
  });

  it('summarises every configured destination, sorted', async () => {
    let asked: readonly string[] = [];
    const store = { summaries: async (ids: readonly string[]) => ((asked = ids), []) };
    const response = await server('t0ken', store as unknown as Partial<DeliveryLogStore>).inject({ url: '/admin/v1/delivery-summary?since=0&until=1000', headers: auth });
    expect(response.json()).toEqual({ since: '1970-01-01T00:00:00.000Z', until: '1970-01-01T00:00:01.000Z', destinations: [] });
    expect(asked).toEqual(['crm']);
  });
});
