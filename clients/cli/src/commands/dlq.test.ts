import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../program.js';
import { formatDeadLetters, formatReplay, limitOption, listQuery, nextPageCommand, shellWord, timeOption, type ListedDeadLetter } from './dlq.js';

async function run(argv: string[], env: Record<string, string> = { ADMIN_TOKEN: 't' }) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env, out: (text) => (out += text), err: (text) => (err += text) });
  return { code, out, err };
}

const letter = (overrides: Partial<ListedDeadLetter> = {}): ListedDeadLetter => ({
  id: '1/42',
  deliveryId: 'crm/m-1',
  destinationId: 'crm',
  messageId: 'm-1',
  messageType: 'track',
  reason: 'expired',
  status: 503,
  error: 'HTTP 503 from webhooks[0] https://hooks.example.com',
  deadAt: '2024-05-01T12:00:00.000Z',
  attempts: 6,
  replayedAt: null,
  ...overrides,
});

describe('TIME and --limit', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');

  it('turns a duration into the absolute time it means, and keeps ISO-8601', () => {
    const parse = timeOption(() => now);
    expect(parse('2h')).toBe('2024-05-01T10:00:00.000Z');
    expect(parse('2024-04-30T08:00:00+02:00')).toBe('2024-04-30T06:00:00.000Z');
    expect(parse('2024-04-30')).toBe('2024-04-30T00:00:00.000Z');
    expect(() => parse('yesterday')).toThrow('"yesterday" is not a time');
  });

  it('takes a limit from 1 to 1000', () => {
    expect(limitOption('25')).toBe(25);
    for (const bad of ['0', '1001', '2.5', 'ten']) expect(() => limitOption(bad), bad).toThrow('use a whole number from 1 to 1000');
  });
});

describe('formatDeadLetters', () => {
  it('prints a table with each error below its row, and how many match in all', () => {
    const lines = formatDeadLetters({
      order: 'newest first',
      matched: 5,
      next: '1714564800000-0-7',
      deadLetters: [letter(), letter({ id: '0/7', destinationId: 'crm-hooks', messageId: 'm-22', reason: 'tls', status: null, replayedAt: '2024-05-01T13:00:00.000Z', error: 'certificate refused' })],
    });
    expect(lines).toEqual([
      'DEAD AT                   DESTINATION  MESSAGE  TYPE   REASON   STATUS  ATTEMPTS  REPLAYED                  ID',
      '2024-05-01T12:00:00.000Z  crm          m-1      track  expired  503     6         no                        1/42',
      '  HTTP 503 from webhooks[0] https://hooks.example.com',
      '2024-05-01T12:00:00.000Z  crm-hooks    m-22     track  tls      -       6         2024-05-01T13:00:00.000Z  0/7',
      '  certificate refused',
      '2 of 5 matching dead letters, newest first',
    ]);
  });

  it('says when nothing matches, counts when everything is shown, and marks the last of several pages', () => {
    expect(formatDeadLetters({ order: 'newest first', matched: 0, deadLetters: [], next: null })).toEqual(['no dead letters match']);
    expect(formatDeadLetters({ order: 'newest first', matched: 1, deadLetters: [letter()], next: null }).at(-1)).toBe('1 matching dead letter, newest first');
    expect(formatDeadLetters({ order: 'newest first', matched: 5, deadLetters: [letter()], next: null }).at(-1)).toBe('1 of 5 matching dead letters, newest first; the last page');
    expect(formatDeadLetters({ order: 'newest first', matched: 5, deadLetters: [letter()], next: '1714564800000-1-42' }).at(-1)).toBe('1 of 5 matching dead letters, newest first');
    expect(formatDeadLetters({ order: 'newest first', matched: 2, deadLetters: [], next: null })).toEqual(['none older than the cursor (2 matching dead letters in all)']);
  });
});

describe('paging dlq list', () => {
  it('sends the cursor as before, after the filters', () => {
    expect(listQuery({ limit: 3, destination: 'crm', before: '1714564800000-1-42' }).toString()).toBe('limit=3&destination=crm&before=1714564800000-1-42');
    expect(listQuery({ limit: 100 }).toString()).toBe('limit=100');
  });

  it('prints the next page as the same command with --before the cursor, the since absolute', () => {
    const options = { destination: 'crm', since: '2024-05-01T10:00:00.000Z', reason: 'expired', limit: 50, before: '1714564800000-1-99' };
    expect(nextPageCommand(options, '1714564800000-1-42')).toBe(
      'tributary dlq list --destination crm --since 2024-05-01T10:00:00.000Z --reason expired --limit 50 --before 1714564800000-1-42',
    );
    expect(nextPageCommand({ limit: 100 }, '5-0-7')).toBe('tributary dlq list --limit 100 --before 5-0-7');
  });

  it('quotes only what a shell would read otherwise', () => {
    expect(shellWord('crm-hooks.v2')).toBe('crm-hooks.v2');
    expect(shellWord('my hooks')).toBe("'my hooks'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    expect(shellWord('')).toBe("''");
  });
});

describe('formatReplay', () => {
  it('reports replayed, matched and skipped, and that a dry run wrote nothing', () => {
    expect(formatReplay({ destination: 'crm', matched: 5, replayed: 3, skipped: 2, dryRun: false })).toBe('replayed 3 of 5 matching dead letters of crm (2 already replayed, skipped)');
    expect(formatReplay({ destination: 'crm', matched: 5, replayed: 3, skipped: 2, dryRun: true })).toBe(
      'dry run: 3 of 5 matching dead letters of crm would be replayed (2 already replayed); nothing written',
    );
  });
});

const pagedAnswer = { order: 'newest first', matched: 3, deadLetters: [letter({ id: '0/7' })], next: '1714564800000-0-7' };

describe('tributary dlq against an admin API', () => {
  const requests: Array<{ method: string; url: string; body: string; authorization: string | undefined }> = [];
  let url = '';
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', body, authorization: request.headers.authorization });
      response.setHeader('content-type', 'application/json');
      if (request.url?.startsWith('/admin/v1/dlq/replay')) {
        const { destination, dryRun } = JSON.parse(body) as { destination: string; dryRun: boolean };
        if (destination === 'nope') {
          response.statusCode = 404;
          response.end(JSON.stringify({ error: 'destination "nope" does not exist', code: 'not_found', issues: [] }));
          return;
        }
        response.end(JSON.stringify({ destination, matched: 2, replayed: 2, skipped: 0, dryRun }));
        return;
      }
      // `destination=paged` has three dead letters, one a page: the cursor leads from the first page to the next.
      if (request.url?.includes('destination=paged')) {
        const onSecondPage = request.url.includes('before=');
        response.end(JSON.stringify({ ...pagedAnswer, deadLetters: [letter({ id: onSecondPage ? '0/6' : '0/7' })], next: onSecondPage ? '1714564800000-0-6' : pagedAnswer.next }));
        return;
      }
      response.end(JSON.stringify({ order: 'newest first', matched: 1, deadLetters: [letter()], next: null }));
    });
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('lists with the filters as query parameters, as a table or as JSON', async () => {
    const table = await run(['--url', url, 'dlq', 'list', '--destination', 'crm', '--reason', 'expired', '--since', '2024-05-01T00:00:00Z', '--limit', '5']);
    expect(table.code).toBe(0);
    expect(requests.at(-1)).toMatchObject({ method: 'GET', url: '/admin/v1/dlq?limit=5&destination=crm&since=2024-05-01T00%3A00%3A00.000Z&reason=expired', authorization: 'Bearer t' });
    expect(table.out.split('\n')[1]).toContain('crm          m-1');

    const json = await run(['--url', url, 'dlq', 'list', '--json']);
    expect(JSON.parse(json.out)).toEqual({ order: 'newest first', matched: 1, deadLetters: [letter()], next: null });
    expect(requests.at(-1)!.url).toBe('/admin/v1/dlq?limit=100');
    expect(table.out).not.toContain('next page');
  });

  it('prints how to get the next page, and gets it with --before', async () => {
    const first = await run(['--url', url, 'dlq', 'list', '--destination', 'paged', '--since', '2024-05-01T12:00:00+02:00', '--limit', '1']);
    expect(first.code).toBe(0);
    const lines = first.out.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual([
      '1 of 3 matching dead letters, newest first',
      'next page: tributary dlq list --destination paged --since 2024-05-01T10:00:00.000Z --limit 1 --before 1714564800000-0-7',
    ]);

    const second = await run(['--url', url, 'dlq', 'list', '--destination', 'paged', '--since', '2024-05-01T10:00:00.000Z', '--limit', '1', '--before', '1714564800000-0-7']);
    expect(requests.at(-1)!.url).toBe('/admin/v1/dlq?limit=1&destination=paged&since=2024-05-01T10%3A00%3A00.000Z&before=1714564800000-0-7');
    expect(second.out).toContain('0/6');
    expect(second.out.trimEnd().split('\n').at(-1)).toBe('next page: tributary dlq list --destination paged --since 2024-05-01T10:00:00.000Z --limit 1 --before 1714564800000-0-6');

    // --json: the answer as it is, cursor and all, and nothing else.
    const json = await run(['--url', url, 'dlq', 'list', '--destination', 'paged', '--json']);
    expect(JSON.parse(json.out)).toEqual(pagedAnswer);
  });

  it('replays one destination, sending the since as an absolute time', async () => {
    const before = Date.now();
    const replay = await run(['--url', url, 'dlq', 'replay', '--destination', 'crm', '--since', '2h', '--dry-run']);
    expect(replay).toEqual({ code: 0, out: 'dry run: 2 of 2 matching dead letters of crm would be replayed (0 already replayed); nothing written\n', err: '' });
    const sent = JSON.parse(requests.at(-1)!.body) as { destination: string; since: string; dryRun: boolean };
    expect(sent.destination).toBe('crm');
    expect(sent.dryRun).toBe(true);
    expect(Date.parse(sent.since)).toBeGreaterThanOrEqual(before - 7_200_000);
    expect(Date.parse(sent.since)).toBeLessThanOrEqual(Date.now() - 7_200_000);
  });

  it('exits 2 for usage errors and for what the API refuses', async () => {
    const missing = await run(['--url', url, 'dlq', 'replay']);
    expect([missing.code, missing.err]).toEqual([2, expect.stringContaining("required option '--destination <id>' not specified")]);
    const badTime = await run(['--url', url, 'dlq', 'list', '--since', 'soon']);
    expect([badTime.code, badTime.err]).toEqual([2, expect.stringContaining('"soon" is not a time')]);
    const badReason = await run(['--url', url, 'dlq', 'list', '--reason', 'vanished']);
    expect([badReason.code, badReason.err]).toEqual([2, expect.stringContaining('use one of: expired, http_status')]);
    const unknown = await run(['--url', url, 'dlq', 'replay', '--destination', 'nope']);
    expect([unknown.code, unknown.err]).toEqual([2, 'tributary: destination "nope" does not exist\n']);
  });
});
