/**
 * The delivery-log commands against a scripted admin API: which requests they make (paths,
 * encoded ids, filters, the pinned range, cursors), and what they print and exit with.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AttemptPage, TailPage } from '../delivery-log/answers.js';
import { testAttempt, testDelivered, testDeliveryStatus, testIndexedMessage, testSummary, testTailMessage } from '../delivery-log/test-answers.js';
import { runCli } from '../program.js';
import { attemptQuery, searchRange, statusOption } from './attempts.js';

type Handler = (url: URL, response: ServerResponse) => void;

const requests: URL[] = [];
let handler: Handler = (_url, response) => response.writeHead(500).end();
let base = '';
const server = createServer((request: IncomingMessage, response) => {
  const url = new URL(request.url ?? '/', 'http://cli.test');
  requests.push(url);
  handler(url, response);
});
const json = (response: ServerResponse, status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests.length = 0;
});

async function run(argv: string[], interruptSignal?: () => AbortSignal) {
  let out = '';
  let err = '';
  const code = await runCli(['--url', base, ...argv], { env: { ADMIN_TOKEN: 't' }, out: (text) => (out += text), err: (text) => (err += text), ...(interruptSignal ? { interruptSignal } : {}) });
  return { code, out, err };
}

describe('tributary attempts', () => {
  it('sends the filters, pins the range on its own clock, and follows every cursor with --all', async () => {
    const pages: Record<string, AttemptPage> = {
      first: { attempts: [testDelivered()], nextCursor: 'c1' },
      c1: { attempts: [testAttempt()], nextCursor: 'c2' },
      c2: { attempts: [testAttempt({ id: '0-3', messageId: 'm-0' })], nextCursor: null },
    };
    handler = (url, response) => json(response, 200, pages[url.searchParams.get('cursor') ?? 'first']);
    const before = Date.now();
    const result = await run(['attempts', '--destination', 'crm', '--status', '5xx', '--user-id', 'u 1', '--message-id', 'm/1', '--limit', '1', '--all']);
    expect(result.code).toBe(0);
    expect(requests.map((url) => url.searchParams.get('cursor'))).toEqual([null, 'c1', 'c2']);
    const [first, ...rest] = requests.map((url) => Object.fromEntries(url.searchParams));
    expect(first).toMatchObject({ destination: 'crm', status: '5xx', userId: 'u 1', messageId: 'm/1', limit: '1' });
    // Every page is asked for the same hour, ending when the command started.
    const until = Date.parse(first!.until!);
    expect(until).toBeGreaterThanOrEqual(before);
    expect(Date.parse(first!.since!)).toBe(until - 3_600_000);
    for (const page of rest) expect([page.since, page.until]).toEqual([first!.since, first!.until]);
    const lines = result.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^STARTED AT\s+DESTINATION/);
    expect(lines.filter((line) => /^2026-/.test(line)).map((line) => line.split(/\s+/).at(-1))).toEqual(['1-57', '1-42', '0-3']);
    expect(lines.at(-1)).toMatch(/^3 attempts from .* newest first$/);
  });

  it('prints one page with a cursor for the next, and the API answer with --json', async () => {
    handler = (_url, response) => json(response, 200, { attempts: [testAttempt()], nextCursor: 'c1' });
    const table = await run(['attempts', '--since', '2026-11-25T09:00:00Z', '--until', '2026-11-25T10:00:00Z']);
    expect(Object.fromEntries(requests[0]!.searchParams)).toEqual({ since: '2026-11-25T09:00:00.000Z', until: '2026-11-25T10:00:00.000Z', limit: '50' });
    expect(table.out.trimEnd().split('\n').at(-1)).toBe(
      '1 attempt from 2026-11-25T09:00:00.000Z to 2026-11-25T10:00:00.000Z, newest first; more match: --all lists them all, --cursor c1 the next page',
    );
    const answer = await run(['attempts', '--json', '--cursor', 'c0']);
    expect(JSON.parse(answer.out)).toEqual({ attempts: [testAttempt()], nextCursor: 'c1' });
    expect(requests.at(-1)!.searchParams.get('cursor')).toBe('c0');
  });

  it('with --all --json prints one answer holding every page', async () => {
    handler = (url, response) =>
      json(response, 200, url.searchParams.has('cursor') ? { attempts: [testAttempt()], nextCursor: null } : { attempts: [testDelivered()], nextCursor: 'c1' });
    const result = await run(['attempts', '--all', '--json']);
    expect(JSON.parse(result.out)).toEqual({ attempts: [testDelivered(), testAttempt()], nextCursor: null });
  });

  it('refuses a status the API would not take before asking it, and passes on what the API refuses', async () => {
    const bad = await run(['attempts', '--status', 'failed']);
    expect([bad.code, requests.length]).toEqual([2, 0]);
    expect(bad.err).toContain('use an outcome (delivered, retry, deferred, dead), error');
    handler = (_url, response) =>
      json(response, 400, { error: 'invalid query: since: must be before until', code: 'validation_failed', issues: [{ path: 'since', message: 'must be before until' }] });
    const refused = await run(['attempts', '--since', '2026-11-25T11:00:00Z', '--until', '2026-11-25T10:00:00Z']);
    expect(refused).toEqual({ code: 1, out: '', err: 'tributary: invalid query: since: must be before until\n  since: must be before until\n' });
  });

  it('stops when the API hands back the cursor it was given', async () => {
    handler = (_url, response) => json(response, 200, { attempts: [testAttempt()], nextCursor: 'same' });
    const result = await run(['attempts', '--all', '--cursor', 'same']);
    expect([result.code, result.err]).toEqual([2, 'tributary: the admin API answered the same cursor twice; stopping\n']);
  });
});

describe('attempt options', () => {
  it('takes the statuses the API takes', () => {
    for (const good of ['delivered', 'retry', 'deferred', 'dead', 'error', '503', '5xx', '2XX']) expect(statusOption(good)).toBe(good);
    for (const bad of ['failed', '600', '50', '5x', '']) expect(() => statusOption(bad), bad).toThrow('use an outcome');
  });

  it('defaults the range to the hour before --until, and --until to now', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    expect(searchRange({}, now)).toEqual({ since: '2026-11-25T09:00:00.000Z', until: '2026-11-25T10:00:00.000Z' });
    expect(searchRange({ until: '2026-11-24T00:00:00.000Z' }, now)).toEqual({ since: '2026-11-23T23:00:00.000Z', until: '2026-11-24T00:00:00.000Z' });
    expect(searchRange({ since: '2026-11-20T00:00:00.000Z' }, now)).toEqual({ since: '2026-11-20T00:00:00.000Z', until: '2026-11-25T10:00:00.000Z' });
    expect(attemptQuery({ limit: 5, source: 'web' }, { since: 'a', until: 'b' }, 'c').toString()).toBe('source=web&since=a&until=b&limit=5&cursor=c');
  });
});

describe('tributary messages show', () => {
  it('asks for the encoded id and prints the history, or exits 2 saying it is not in the log', async () => {
    handler = (url, response) => {
      if (url.pathname === '/admin/v1/messages/m%2F1%20x') {
        json(response, 200, { messageId: 'm/1 x', messages: [testIndexedMessage()], routing: [], deliveries: [testDeliveryStatus()], attempts: [testAttempt(), testDelivered()] });
      } else json(response, 404, { error: 'message "nope" is not in the delivery log (not indexed yet, or past retention)', code: 'not_found', issues: [] });
    };
    const shown = await run(['messages', 'show', 'm/1 x']);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('message m/1 x\n');
    expect(shown.out).toContain('delivery to crm (source web): delivered at');
    const asJson = await run(['messages', 'show', 'm/1 x', '--json']);
    expect(JSON.parse(asJson.out)).toMatchObject({ messageId: 'm/1 x', attempts: [{ id: '1-42' }, { id: '1-57' }] });
    const missing = await run(['messages', 'show', 'nope']);
    expect(missing).toEqual({ code: 2, out: '', err: 'tributary: message "nope" is not in the delivery log (not indexed yet, or past retention)\n' });
  });
});

describe('tributary messages tail', () => {
  it('--once prints the latest messages oldest first and exits', async () => {
    handler = (_url, response) => json(response, 200, { messages: [testTailMessage({ messageId: 'm-2' }), testTailMessage({ messageId: 'm-1' })], cursor: 'c1' } satisfies TailPage);
    const result = await run(['messages', 'tail', '--once', '--source', 'web', '--limit', '2']);
    expect(result.code).toBe(0);
    expect(Object.fromEntries(requests[0]!.searchParams)).toEqual({ limit: '2', source: 'web' });
    expect(result.out.split('\n').slice(1, 3).map((line) => line.split(/\s+/).at(-1))).toEqual(['m-1', 'm-2']);
    const ndjson = await run(['messages', 'tail', '--once', '--json']);
    expect(ndjson.out.trimEnd().split('\n').map((line) => (JSON.parse(line) as { messageId: string }).messageId)).toEqual(['m-1', 'm-2']);
    handler = (_url, response) => json(response, 200, { messages: [], cursor: 'c0' });
    expect((await run(['messages', 'tail', '--once'])).out).toBe('no messages in the delivery log\n');
  });

  it('follows with the cursor until Ctrl-C, then exits 0', async () => {
    const interrupt = new AbortController();
    handler = (url, response) => {
      const after = url.searchParams.get('after');
      if (after === null) json(response, 200, { messages: [testTailMessage({ messageId: 'm-1' })], cursor: 'c1' });
      else {
        json(response, 200, { messages: [testTailMessage({ messageId: 'm-2' })], cursor: 'c2' });
        interrupt.abort();
      }
    };
    const result = await run(['messages', 'tail'], () => interrupt.signal);
    expect(result.code).toBe(0);
    expect(requests.map((url) => [url.searchParams.get('after'), url.searchParams.get('limit')])).toEqual([
      [null, '20'],
      ['c1', '200'],
    ]);
    expect(result.out.split('\n').filter((line) => line.startsWith('2026-')).map((line) => line.split(/\s+/).at(-1))).toEqual(['m-1', 'm-2']);
  });
});

describe('tributary destinations summary', () => {
  it('asks for every destination or one, with the range given, and prints their table', async () => {
    handler = (url, response) =>
      url.pathname === '/admin/v1/delivery-summary'
        ? json(response, 200, { since: '2026-11-25T09:00:00.000Z', until: '2026-11-25T10:00:00.000Z', destinations: [testSummary(), testSummary({ destinationId: 'b' })] })
        : json(response, 200, testSummary({ destinationId: 'crm hooks' }));
    const all = await run(['destinations', 'summary', '--since', '2026-11-25T09:00:00Z']);
    expect(`${requests[0]!.pathname}${requests[0]!.search}`).toBe('/admin/v1/delivery-summary?since=2026-11-25T09%3A00%3A00.000Z');
    expect(all.out.split('\n').slice(1, 3).map((line) => line.split(/\s+/)[0])).toEqual(['crm', 'b']);
    const one = await run(['destinations', 'summary', 'crm hooks', '--json']);
    expect(requests[1]!.pathname).toBe('/admin/v1/destinations/crm%20hooks/summary');
    expect(requests[1]!.search).toBe('');
    expect(JSON.parse(one.out)).toEqual(testSummary({ destinationId: 'crm hooks' }));
  });
});
