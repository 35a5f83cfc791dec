/**
 * The refusals Node and Fastify make before any of ingest's routes run, on a real listening
 * server: Node hands them over on the socket, which in-process injection never reaches.
 */
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpServer, createLogger, createMetrics, createReadiness, type HttpServer } from '@tributary/shared';
import { loadAdminOpenApi } from './admin/openapi.js';
import { registerAdminApi } from './admin/plugin.js';
import { testAdminDeps } from './admin/test-deps.js';
import { createIngestMetrics } from './ingest-metrics.js';
import { registerSegmentApi } from './segment-api.js';
import { clientErrorRefusal, frameworkRefusal, installServerRefusals, rawResponse, type ServerRefusals } from './server-refusals.js';

let app: HttpServer;
let refusals: ServerRefusals;
let port: number;
let closed: boolean;

beforeEach(async () => {
  const logger = createLogger({ service: 'ingest-test', level: 'silent' });
  app = createHttpServer({ logger, metrics: createMetrics('ingest-refusals'), readiness: createReadiness(), timeouts: { requestMs: 1_000, headersMs: 300, keepAliveMs: 5_000 } });
  refusals = installServerRefusals(app, { logger, timeouts: { requestMs: 1_000, headersMs: 300 } });
  registerSegmentApi(app, {
    sourceByWriteKey: () => undefined,
    encode: () => {
      throw new Error('not in these tests');
    },
    submit: async () => undefined,
    isReady: () => true,
    isOverloaded: () => false,
    logger,
    metrics: createIngestMetrics(createMetrics('ingest-refusals-2').registry),
  });
  registerAdminApi(app, { ...testAdminDeps(), logger, openapi: loadAdminOpenApi() });
  app.get('/slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { slow: true };
  });
  closed = false;
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});

afterEach(async () => {
  if (!closed) await app.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Reads the HTTP responses in what a socket received (one or several, pipelined). */
function parseResponses(received: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = received;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const [statusLine, ...headerLines] = rest.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length']);
    const body = rest.slice(headEnd + 4, headEnd + 4 + length);
    answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) as Record<string, unknown> });
    rest = rest.slice(headEnd + 4 + length);
  }
  return answers;
}

/** Writes `chunks` on a new connection (each after the previous `after` callback) and returns all it received once closed. */
async function exchange(first: string, then?: () => Promise<string>): Promise<RawAnswer[]> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(first);
  if (then) socket.write(await then());
  await ended;
  return parseResponses(Buffer.concat(chunks).toString('latin1'));
}

function expectApiFormat(answer: RawAnswer | undefined, status: number, code: string): void {
  expect(answer?.status).toBe(status);
  expect(answer?.headers['content-type']).toMatch(/^application\/json/);
  expect(answer?.body).toMatchObject({ success: false, code, error: expect.any(String) as unknown as string });
  expect(answer?.body.message).toBe(answer?.body.error);
}

describe("Node's refusals of what a client sent", () => {
  it('400 with a JSON body for bytes that are not HTTP', async () => {
    const [answer] = await exchange('NOT-A-METHOD / HTTP/1.1\r\nHost: x\r\n\r\n');
    expectApiFormat(answer, 400, 'malformed_request');
    expect(answer!.body.error).toMatch(/^the request is not valid HTTP\/1.1/);
  });

  it('431 with a JSON body for headers over the limit', async () => {
    const [answer] = await exchange(`POST /v1/track HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectApiFormat(answer, 431, 'headers_too_large');
  });

  it('408 with a JSON body, naming the limits, for headers that do not arrive in time', async () => {
    const [answer] = await exchange('POST /v1/track HTTP/1.1\r\nHost: x\r\n');
    expectApiFormat(answer, 408, 'request_timeout');
    expect(answer!.body.error).toContain('within 300 ms');
  });

  it('answers nobody when the client reset the connection', () => {
    expect(clientErrorRefusal(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBeUndefined();
  });

  it('writes a whole HTTP/1.1 response with its headers', () => {
    const text = rawResponse({ status: 503, code: 'unavailable', error: 'later', headers: { 'retry-after': '5' } });
    const body = '{"success":false,"error":"later","code":"unavailable","message":"later"}';
    expect(text).toBe(
      `HTTP/1.1 503 Service Unavailable\r\nretry-after: 5\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
});

describe('paths nothing serves', () => {
  it('404 in the API format outside /v1', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/batch`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ success: false, code: 'not_found', error: expect.stringContaining('no route POST /batch: the Segment API is POST /v1/batch') as unknown as string });
    expect(body.message).toBe(body.error);
  });

  it('leaves /v1 its own 404, and cuts a long path it repeats', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/${'p'.repeat(5_000)}`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toMatch(/^no endpoint POST \/v1\/p+…\(\d+ more characters\): use POST \/v1\/batch/);
    expect(body.error.length).toBeLessThan(300);
    expect(body.message).toBe(body.error);
  });

  it('serves the routes that exist as before', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});

describe('paths the router cannot read', () => {
  it('400 in the Segment API format for broken percent-encoding outside /admin', async () => {
    for (const url of ['/v1/track%', '/v1/batch%E0%A4%A', '/nowhere/%zz']) {
      const response = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{}' });
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const body = response.json<Record<string, unknown>>();
      expect(body).toMatchObject({ success: false, code: 'invalid_url', error: expect.stringContaining('not valid percent-encoding') as unknown as string });
      expect(body.message).toBe(body.error);
    }
  });

  it('400 in the admin API format under /admin, before the token is checked', async () => {
    for (const url of ['/admin/v1/destinations/%E0%A4%A/health', '//admin/v1/sources/%']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error: expect.stringContaining('not valid percent-encoding') as unknown as string, code: 'invalid_url', issues: [] });
    }
  });

  it('maps the router\'s other refusals too', () => {
    expect(frameworkRefusal({ code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 }, '/admin/v1/sources/x')).toMatchObject({ status: 414, body: { code: 'path_too_long', issues: [] } });
    expect(frameworkRefusal({ code: 'FST_ERR_ASYNC_CONSTRAINT', statusCode: 500 }, '/v1/track')).toMatchObject({ status: 500, body: { success: false, code: 'internal_error' } });
    expect(frameworkRefusal({ code: 'FST_ERR_ASYNC_CONSTRAINT', statusCode: 500 }, '/admin')).toMatchObject({ status: 500, body: { code: 'internal' } });
    // "/administrator" is not the admin API.
    expect(frameworkRefusal({ code: 'FST_ERR_BAD_URL' }, '/administrator/%')).toMatchObject({ body: { success: false } });
  });
});

describe('shutdown', () => {
  it('answers a request that arrives while the server closes with 503, Retry-After and the API format', async () => {
    let closing: Promise<void> | undefined;
    const answers = await exchange('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', async () => {
      // The slow request keeps the connection busy, so the close does not cut it as idle.
      await new Promise((resolve) => setTimeout(resolve, 50));
      closing = refusals.close();
      closed = true;
      return 'POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
    });
    await closing;
    expect(answers[0]).toMatchObject({ status: 200, body: { slow: true } });
    expectApiFormat(answers[1], 503, 'unavailable');
    expect(answers[1]!.headers['retry-after']).toBe('5');
    expect(answers[1]!.headers.connection).toBe('close');
  });
});
