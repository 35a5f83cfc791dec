/**
 * How ingest serves the web console, through Fastify's in-process injection, over a small
 * built console written to a temporary directory (the real build is exercised in a browser
 * by test/e2e/console.it.test.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, createLogger, createMetrics, createReadiness, type HttpServer } from '@tributary/shared';
import { CONSOLE_CSP, consoleDistDir, HASHED_ASSET_CACHE, registerConsole, REVALIDATE_CACHE } from './console.js';

const INDEX = '<!doctype html><title>Tributary console</title><script type="module" src="/console/assets/index-abc123.js"></script>';
const SCRIPT = 'console.log("app")';
const logger = createLogger({ service: 'ingest-test', level: 'silent' });

let root: string;
let app: HttpServer;

function server(dist: string | undefined): HttpServer {
  const created = createHttpServer({ logger, metrics: createMetrics('ingest-console-test'), readiness: createReadiness() });
  created.get('/v1/track', async () => ({ route: 'segment' }));
  registerConsole(created, { logger, root: dist });
  return created;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tributary-console-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), INDEX);
  writeFileSync(join(root, 'assets', 'index-abc123.js'), SCRIPT);
  writeFileSync(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(root, '.secret'), 'not for the web');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

afterEach(async () => {
  await app?.close();
});

describe('the web console at /console/', () => {
  it('redirects /console to /console/, keeping the query', async () => {
    app = server(root);
    const bare = await app.inject({ method: 'GET', url: '/console' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/console/');
    const withQuery = await app.inject({ method: 'GET', url: '/console?x=1' });
    expect(withQuery.headers.location).toBe('/console/?x=1');
  });

  it('serves index.html at /console/, revalidated on every load, under a same-origin CSP', async () => {
    app = server(root);
    const response = await app.inject({ method: 'GET', url: '/console/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toBe(INDEX);
    expect(response.headers['cache-control']).toBe(REVALIDATE_CACHE);
    expect(response.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers.etag).toBeDefined();
  });

  it('has a CSP that allows this origin only and nothing inline', () => {
    const directives = new Map(CONSOLE_CSP.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]));
    for (const name of ['default-src', 'script-src', 'style-src', 'connect-src', 'img-src']) expect(directives.get(name), name).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(CONSOLE_CSP).not.toMatch(/unsafe|data:|https?:|\*/);
  });

  it('caches hashed assets for a year and the rest not at all', async () => {
    app = server(root);
    const script = await app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.body).toBe(SCRIPT);
    expect(script.headers['cache-control']).toBe(HASHED_ASSET_CACHE);
    expect(script.headers['content-security-policy']).toBe(CONSOLE_CSP);
    const icon = await app.inject({ method: 'GET', url: '/console/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe(REVALIDATE_CACHE);
  });

  it("answers the app's own routes with index.html, so a reloaded page works", async () => {
    app = server(root);
    for (const url of ['/console/log?destination=crm', '/console/messages/m-1', '/console/dead-letters/']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toBe(INDEX);
      expect(response.headers['cache-control'], url).toBe(REVALIDATE_CACHE);
      expect(response.headers['content-security-policy'], url).toBe(CONSOLE_CSP);
    }
    const head = await app.inject({ method: 'HEAD', url: '/console/tail' });
    expect(head.statusCode).toBe(200);
  });

  it('keeps a missing asset a 404 rather than HTML, and other methods out', async () => {
    app = server(root);
    const missing = await app.inject({ method: 'GET', url: '/console/assets/gone-123.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'not_found' });
    const post = await app.inject({ method: 'POST', url: '/console/log', payload: {} });
    expect(post.statusCode).toBe(404);
  });

  it('serves no file outside the build and no dotfile', async () => {
    app = server(root);
    const dotfile = await app.inject({ method: 'GET', url: '/console/.secret' });
    expect(dotfile.body).not.toContain('not for the web');
    const traversal = await app.inject({ method: 'GET', url: '/console/assets/..%2f..%2fpackage.json' });
    expect(traversal.body).not.toContain('"name"');
    const encoded = await app.inject({ method: 'GET', url: '/console/%2e%2e/%2e%2e/etc/passwd' });
    expect(encoded.body).not.toContain('root:');
  });

  it('needs no token and leaves the rest of the server alone', async () => {
    app = server(root);
    expect((await app.inject({ method: 'GET', url: '/console/' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/v1/track' })).json()).toEqual({ route: 'segment' });
    const elsewhere = await app.inject({ method: 'GET', url: '/consoled' });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.headers['content-security-policy']).toBeUndefined();
  });

  it('says so when the console was not built, instead of failing to start', async () => {
    app = server(join(root, 'missing'));
    const response = await app.inject({ method: 'GET', url: '/console/' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'console_not_built' });
    expect((await app.inject({ method: 'GET', url: '/console/log' })).statusCode).toBe(503);
  });

  it('finds the built console of the @tributary/console workspace', () => {
    expect(consoleDistDir()).toMatch(/clients[/\\]console[/\\]dist$/);
  });
});
