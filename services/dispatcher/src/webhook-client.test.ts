import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { UrlResult } from './classify.js';
import { URL_BUSY_CODE, WebhookClient } from './webhook-client.js';

const request = { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') } as const;
/** IP-literal URLs only: the connector never asks for a name. */
const hosts = { resolve: () => Promise.reject(new Error('no lookups here')) };

let server: Server | undefined;
let client: WebhookClient | undefined;

afterEach(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = client = undefined;
});

async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const status = (result: UrlResult): string => (result.kind === 'response' ? String(result.status) : result.kind);

describe('WebhookClient', () => {
  it('gives every URL of every delivery in flight a connection, when a destination has several URLs on one origin', async () => {
    // The receiver answers only once all six requests are in: any request left waiting for a
    // connection would spend the answer window queued and come back as a timeout.
    const waiting: ServerResponse[] = [];
    const base = await receiver((_req, res) => {
      waiting.push(res);
      if (waiting.length === 6) for (const held of waiting) held.end('ok');
    });
    client = new WebhookClient({ timeoutMs: 1_000, allowPrivateNetworks: true, connectionsPerUrl: 2, hosts });
    // Two deliveries in flight (the destination's limit) × three URLs on one origin.
    const results = await Promise.all([0, 1].flatMap(() => ['/a', '/b', '/c'].map((path) => client!.post('crm', `${base}${path}`, request))));
    expect(results.map(status)).toEqual(['200', '200', '200', '200', '200', '200']);
  });

  it('a path that hangs does not hold the connections of another path of the same origin', async () => {
    const base = await receiver((req, res) => {
      if (req.url !== '/hangs') res.end('ok');
    });
    client = new WebhookClient({ timeoutMs: 500, allowPrivateNetworks: true, connectionsPerUrl: 1, hosts });
    const hanging = client.post('crm', `${base}/hangs`, request);
    const answered = await client.post('crm', `${base}/answers`, request);
    expect(status(answered)).toBe('200');
    expect(status(await hanging)).toBe('timeout');
  });

  it('counts an answer by its status line when the body after it is slow or cut off', async () => {
    const base = await receiver((req, res) => {
      res.writeHead(req.url === '/refused' ? 503 : 200, { 'content-length': '1000', 'retry-after': '30' });
      res.write('partial');
      if (req.url === '/cut' || req.url === '/refused') setTimeout(() => res.destroy(), 20);
      // '/slow': the rest never comes.
    });
    client = new WebhookClient({ timeoutMs: 300, allowPrivateNetworks: true, connectionsPerUrl: 1, hosts });
    const results = await Promise.all(['/slow', '/cut', '/refused'].map((path) => client!.post('crm', `${base}${path}`, request)));
    expect(results.map(status)).toEqual(['200', '200', '503']);
    expect(results[2]).toMatchObject({ retryAfterMs: 30_000 });
    expect(results[0]).toMatchObject({ kind: 'response', body: Buffer.from('partial') });
  });

  it('does not take an interim 103 Early Hints for the answer when the receiver then hangs or drops the connection', async () => {
    server = createServer();
    server.on('connection', (socket) => {
      socket.once('data', (request) => {
        socket.write('HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n');
        if (request.toString().includes('/drops')) setTimeout(() => socket.destroy(), 20);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new WebhookClient({ timeoutMs: 300, allowPrivateNetworks: true, connectionsPerUrl: 1, hosts });
    const [hangs, drops] = await Promise.all(['/hangs', '/drops'].map((path) => client!.post('crm', `${base}${path}`, request)));
    expect(status(hangs!)).toBe('timeout');
    expect(drops).toMatchObject({ kind: 'error' });
  });

  it('answers URL_BUSY at once for a URL with as many requests running as connections, until one ends', async () => {
    // A hanging URL beside a healthy one: requests left running after each delivery's success
    // gathered in undici's queue, each holding its body.
    const base = await receiver((req, res) => {
      if (req.url !== '/hangs') res.end('ok');
    });
    client = new WebhookClient({ timeoutMs: 300, allowPrivateNetworks: true, connectionsPerUrl: 2, hosts });
    const running = [client.post('crm', `${base}/hangs`, request), client.post('crm', `${base}/hangs`, request)];
    const busy = await client.post('crm', `${base}/hangs`, request);
    expect(busy).toMatchObject({ kind: 'error', code: URL_BUSY_CODE });
    // Another URL of the same destination, and the same URL of another destination, are not held.
    expect(status(await client.post('crm', `${base}/answers`, request))).toBe('200');
    expect((await Promise.all(running)).map(status)).toEqual(['timeout', 'timeout']);
    // Timed out and aborted: their places are free again (once undici has let go of them).
    let next = await client.post('crm', `${base}/hangs`, request);
    for (let tries = 0; tries < 50 && status(next) !== 'timeout'; tries++) {
      expect(next).toMatchObject({ code: URL_BUSY_CODE });
      await new Promise((resolve) => setTimeout(resolve, 20));
      next = await client.post('crm', `${base}/hangs`, request);
    }
    expect(status(next)).toBe('timeout');
  });

  it('closes the pools of URLs a destination no longer has, and of deleted destinations', async () => {
    const base = await receiver((_req, res) => res.end('ok'));
    client = new WebhookClient({ timeoutMs: 1_000, allowPrivateNetworks: true, connectionsPerUrl: 1, hosts });
    await Promise.all([client.post('crm', `${base}/a`, request), client.post('crm', `${base}/b`, request), client.post('other', `${base}/a`, request)]);
    const open = async () => new Promise<number>((resolve, reject) => server!.getConnections((error, count) => (error ? reject(error) : resolve(count))));
    expect(await open()).toBe(3);
    await client.forgetExcept([{ id: 'crm', settings: { webhooks: [{ url: `${base}/a` }] } }]);
    // The server sees the two closed connections go a moment later.
    for (let tries = 0; tries < 50 && (await open()) > 1; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await open()).toBe(1);
  });
});
