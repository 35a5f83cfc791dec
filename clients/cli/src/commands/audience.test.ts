import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, EXIT_FAILED } from '../errors.js';
import { runCli } from '../program.js';
import { membersBody, type AudienceSyncAnswer } from './audience.js';

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env: { ADMIN_TOKEN: 't' }, out: (text) => (out += text), err: (text) => (err += text) });
  return { code, out, err };
}

// A stand-in admin API that reads the upload to the end and answers with its size.
const received: Array<{ url: string; body: string }> = [];
const server = createServer((request: IncomingMessage, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    received.push({ url: request.url ?? '', body });
    const answer: AudienceSyncAnswer = { audience: 'VIP', trait: 'vip', firstSync: true, members: body.split('\n').filter(Boolean).length, added: 0, removed: 0, changed: 0, unchanged: 0, messages: 0 };
    response.setHeader('content-type', 'application/json').end(JSON.stringify(answer));
  });
});
let url = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const dir = mkdtempSync(join(tmpdir(), 'tributary-audience-'));

describe('tributary audience sync', () => {
  it('uploads the file', async () => {
    const file = join(dir, 'members.ndjson');
    writeFileSync(file, '{"userId":"u1"}\n{"userId":"u2"}\n');
    const result = await run(['--url', url, 'audience', 'sync', 'VIP', file, '--source', 'web']);
    expect([result.code, result.err]).toEqual([0, '']);
    expect(result.out).toContain('VIP (first sync): 2 members, trait vip;');
    expect(received.at(-1)).toEqual({ url: '/admin/v1/audiences/VIP/members?sourceId=web', body: '{"userId":"u1"}\n{"userId":"u2"}\n' });
  });

  // Before, a missing file was an unhandled stream 'error': a stack trace and exit 1, which says "the file was refused".
  it('exits 2 naming a file that is missing or a directory, before sending anything', async () => {
    const sent = received.length;
    const missing = await run(['--url', url, 'audience', 'sync', 'VIP', join(dir, 'nope.ndjson'), '--source', 'web']);
    expect([missing.code, missing.err]).toEqual([EXIT_FAILED, `tributary: ${join(dir, 'nope.ndjson')} cannot be read: ENOENT\n`]);
    const directory = await run(['--url', url, 'audience', 'sync', 'VIP', dir, '--source', 'web']);
    expect([directory.code, directory.err]).toEqual([EXIT_FAILED, `tributary: ${dir} cannot be read: EISDIR\n`]);
    expect(received.length).toBe(sent);
  });
});

describe('membersBody', () => {
  it('turns a read that fails part-way into an exit-2 error naming the file, and reports it', async () => {
    const failing = async function* (): AsyncGenerator<Uint8Array> {
      yield Buffer.from('{"userId":"u1"}\n');
      throw Object.assign(new Error('i/o error'), { code: 'EIO' });
    };
    const reported: CliError[] = [];
    const chunks: Uint8Array[] = [];
    const reading = (async () => {
      for await (const chunk of membersBody('members.ndjson', failing, (error) => reported.push(error))) chunks.push(chunk);
    })();
    const refusal = { message: 'members.ndjson cannot be read: EIO', exitCode: EXIT_FAILED };
    await expect(reading).rejects.toMatchObject(refusal);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(CliError);
    expect(reported[0]).toMatchObject(refusal);
    expect(chunks).toHaveLength(1);
  });
});
