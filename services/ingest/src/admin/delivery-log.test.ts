import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DestinationHealth } from '@tributary/schemas';
import type { HttpServer } from '@tributary/shared';
import { DeliveryLogClient, DeliveryLogUnavailable, deliveryLogRoutes, forwardedPath, withCircuit } from './delivery-log.js';
import type { DestinationHealthTable } from './destination-health.js';
import type { AdminDeps } from './routes.js';

/** What the forwarding must cope with from the indexer's port: answers, errors, silence. */
let server: Server;
let base: string;
const seen: Array<{ url: string | undefined; authorization: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ url: request.url, authorization: request.headers.authorization });
    if (request.url?.startsWith('/admin/v1/messages/')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'message "m 1" is not in the delivery log', code: 'not_found', issues: [] }));
    } else if (request.url?.startsWith('/admin/v1/attempts')) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ attempts: [], nextCursor: null }));
    } else if (request.url === '/admin/v1/other-token') {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'the admin token is not valid', code: 'invalid_token', issues: [] }));
    } else if (request.url === '/admin/v1/no-token') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'the admin API is disabled', code: 'admin_disabled', issues: [] }));
    } else if (request.url === '/admin/v1/broken') {
      response.writeHead(502).end('<html>bad gateway</html>');
    } else if (request.url === '/admin/v1/silent') {
      // Never answers.
    } else {
      response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'the delivery log database is unreachable', code: 'delivery_log_unavailable', issues: [] }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('DeliveryLogClient', () => {
  it('forwards path and query with its own token and passes answers back as they are', async () => {
    const client = new DeliveryLogClient({ url: base, token: 'ingest-token', timeoutMs: 2_000 });
    try {
      expect(await client.get('/attempts?destination=crm&status=5xx')).toEqual({ status: 200, body: { attempts: [], nextCursor: null } });
      expect(seen.at(-1)).toEqual({ url: '/admin/v1/attempts?destination=crm&status=5xx', authorization: 'Bearer ingest-token' });
      const missing = await client.get('/messages/m%201');
      expect(missing.status).toBe(404);
      expect(seen.at(-1)?.url).toBe('/admin/v1/messages/m%201');
      // The indexer's own 503 keeps its words.
      expect(await client.get('/delivery-summary')).toMatchObject({ status: 503, body: { code: 'delivery_log_unavailable' } });
    } finally {
      await client.close();
    }
  });

  it('turns silence, refusal and non-JSON answers into 503 delivery_log_unavailable', async () => {
    const slow = new DeliveryLogClient({ url: base, token: 't', timeoutMs: 300 });
    const refused = new DeliveryLogClient({ url: 'http://127.0.0.1:1', token: 't', timeoutMs: 2_000 });
    try {
      await expect(slow.get('/silent')).rejects.toThrow(/did not answer in time/);
      await expect(slow.get('/broken')).rejects.toBeInstanceOf(DeliveryLogUnavailable);
      const error = await refused.get('/attempts').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryLogUnavailable);
      expect((error as DeliveryLogUnavailable).body()).toMatchObject({ code: 'delivery_log_unavailable', error: expect.stringMatching(/not reachable/) });
    } finally {
      await slow.close();
      await refused.close();
    }
  });

  it("turns the indexer's refusal of ingest's token into 503 delivery_log_unavailable, not the caller's 401", async () => {
    const client = new DeliveryLogClient({ url: base, token: 't', timeoutMs: 2_000 });
    try {
      const refused = await client.get('/other-token').catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(DeliveryLogUnavailable);
      expect((refused as DeliveryLogUnavailable).body()).toMatchObject({ code: 'delivery_log_unavailable', error: expect.stringContaining('same ADMIN_TOKEN as ingest') });
      await expect(client.get('/no-token')).rejects.toThrow(/set ADMIN_TOKEN on the indexer/);
    } finally {
      await client.close();
    }
  });
});

/** GET `path` sent as written: fetch and Node's URL would resolve its dot segments first. */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('forwarding a message lookup', () => {
  it('sends the ids . and .. as /messages/by-id?messageId=…, everything else as received', () => {
    expect(forwardedPath('/messages/:messageId', '/messages/%2E%2E', { messageId: '..' })).toBe('/messages/by-id?messageId=..');
    expect(forwardedPath('/messages/:messageId', '/messages/.', { messageId: '.' })).toBe('/messages/by-id?messageId=.');
    expect(forwardedPath('/messages/:messageId', '/messages/..?x=1', { messageId: '..' })).toBe('/messages/by-id?messageId=..&x=1');
    expect(forwardedPath('/messages/:messageId', '/messages/m%201', { messageId: 'm 1' })).toBe('/messages/m%201');
    expect(forwardedPath('/messages/:messageId', '/messages/by-id?messageId=..', { messageId: 'by-id' })).toBe('/messages/by-id?messageId=..');
    expect(forwardedPath('/attempts', '/attempts?messageId=..', {})).toBe('/attempts?messageId=..');
  });

  it('reaches the message . or .. at the indexer however the caller spelt it', async () => {
    const client = new DeliveryLogClient({ url: base, token: 't', timeoutMs: 2_000 });
    const app = Fastify();
    app.register(
      async (scope) => deliveryLogRoutes(client)(scope as unknown as HttpServer, { health: { views: () => [] } } as unknown as AdminDeps),
      { prefix: '/admin/v1' },
    );
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      const cases: Array<[string, string]> = [
        ['/admin/v1/messages/%2E%2E', '/admin/v1/messages/by-id?messageId=..'],
        ['/admin/v1/messages/..', '/admin/v1/messages/by-id?messageId=..'],
        ['/admin/v1/messages/%2e', '/admin/v1/messages/by-id?messageId=.'],
        ['/admin/v1/messages/.', '/admin/v1/messages/by-id?messageId=.'],
        // The form the console sends: no dot segment in the path at all.
        ['/admin/v1/messages/by-id?messageId=..', '/admin/v1/messages/by-id?messageId=..'],
      ];
      for (const [sent, forwarded] of cases) {
        const answer = await rawGet(port, sent);
        expect(answer.status, sent).toBe(404);
        expect(JSON.parse(answer.body), sent).toMatchObject({ code: 'not_found' });
        expect(seen.at(-1)?.url, sent).toBe(forwarded);
      }
    } finally {
      await app.close();
      await client.close();
    }
  });
});

describe('withCircuit', () => {
  const view = (state: string, queuedFirst: number): DestinationHealth =>
    ({ destinationId: 'crm', instanceId: 'd-1', state, stateSince: 0, openUntil: null, openings: 1, consecutiveFailures: 5, windowRequests: 5, windowFailures: 5, lastSuccessAt: null, lastFailureAt: 1, lastError: 'HTTP 503', queuedFirst, queuedRetries: 0, inFlight: 0, congestedSince: null, attempts: 5, deferrals: 0, updatedAt: 1_000 });
  const table = (views: DestinationHealth[]) => ({ views: () => views }) as unknown as DestinationHealthTable;

  it('adds the published circuit state and backlog to a summary, null when nobody published one', () => {
    expect(withCircuit({ destinationId: 'crm', attempts: 3 }, table([view('open', 7)]), 2_000)).toEqual({
      destinationId: 'crm',
      attempts: 3,
      circuit: { state: 'open', backlog: { firstAttempts: 7, retries: 0, inFlight: 0 }, updatedAt: new Date(1_000).toISOString() },
    });
    expect(withCircuit({ destinationId: 'crm' }, table([]), 2_000)).toEqual({ destinationId: 'crm', circuit: null });
  });
});
