/**
 * The built `tributary` command against the delivery log as deployed: ingest (which forwards
 * the delivery-log routes), the indexer behind it on its embedded PGlite, the router,
 * dispatcher and retry-scheduler on a short retry ladder, and a real webhook receiver that
 * answers each message's first request 503 and the next 200. One Track call goes in; the
 * CLI finds both attempts, shows the message's history and the destination's summary, and
 * follows the live tail until Ctrl-C. Every answer the CLI prints as JSON is checked
 * against the admin API's OpenAPI document.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  ADMIN_OPENAPI_FILE,
  eventually,
  freePort,
  namedSchema,
  REPO_ROOT,
  responseSchema,
  schemaProblems,
  stackEnv,
  startService,
  uniqueNamespace,
  type OpenApiDocument,
  type RunningService,
} from '@tributary/test/harness';
import type { AttemptPage, DeliverySummary, MessageHistory, TailMessage } from './delivery-log/answers.js';

const CLI = join(REPO_ROOT, 'clients', 'cli', 'dist', 'cli.js');
const TOKEN = 'cli-delivery-log-test-token';
const WRITE_KEY = 'wk_cli_log_web_01';
const document = parse(readFileSync(ADMIN_OPENAPI_FILE, 'utf8')) as OpenApiDocument;

/** Answers each message's first request 503, later ones 200, each with a body to find again. */
class FlakyReceiver {
  readonly statuses = new Map<string, number[]>();
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string };
        const seen = this.statuses.get(messageId) ?? [];
        const status = seen.length === 0 ? 503 : 200;
        this.statuses.set(messageId, [...seen, status]);
        response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'thanks' : 'busy, try later');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const receiver = new FlakyReceiver();
const dataDir = mkdtempSync(join(tmpdir(), 'tributary-cli-log-it-'));
const services: RunningService[] = [];
let ingest: RunningService;

function cliEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', TRIBUTARY_URL: ingest.url, TRIBUTARY_ADMIN_TOKEN: TOKEN };
}

function tributary(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: cliEnv() }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

/** Runs the CLI until `done` accepts its result; pauses between runs, as each starts a process. */
async function tributaryUntil(args: string[], done: (run: Run) => boolean, what: string): Promise<Run> {
  return eventually(async () => {
    const run = await tributary(args);
    if (done(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 500));
    return undefined;
  }, what, 30_000);
}

function conforms(schema: Record<string, unknown>, value: unknown): void {
  expect(schemaProblems(document, schema, value)).toEqual([]);
}

async function track(messageId: string): Promise<void> {
  const response = await fetch(`${ingest.url}/v1/track`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messageId, userId: 'u-cli', event: 'Signed Up', properties: { plan: 'pro' } }),
  });
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  const namespace = uniqueNamespace('cli-log');
  const env = { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN, RETRY_LADDER: '300ms,600ms', RETRY_WINDOW: '1m' };
  await receiver.start();
  const indexerPort = await freePort();
  ingest = await startService('ingest', { env: { ...env, DELIVERY_LOG_URL: `http://127.0.0.1:${indexerPort}`, INSTANCE_ID: 'cli-log-ingest' } });
  services.push(ingest);
  const config = join(dataDir, 'tributary.yaml');
  writeFileSync(
    config,
    `sources:\n  - id: web\n    writeKey: ${WRITE_KEY}\ndestinations:\n  - id: crm-hooks\n    type: webhooks\n    sources: [web]\n    settings:\n      webhooks:\n        - url: ${receiver.url}\n`,
  );
  expect((await tributary(['config', 'apply', config])).code).toBe(0);
  for (const name of ['router', 'dispatcher', 'retry-scheduler'] as const) services.push(await startService(name, { env: { ...env, INSTANCE_ID: `cli-log-${name}` } }));
  services.push(await startService('indexer', { env: { ...env, DELIVERY_LOG_DATA_DIR: join(dataDir, 'log'), INSTANCE_ID: 'cli-log-indexer' }, port: indexerPort }));
}, 180_000);

afterAll(async () => {
  for (const service of services.reverse()) await service.stop();
  await receiver.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the delivery log through the CLI', () => {
  const messageId = `cli-log-${Date.now()}`;

  it("finds a message's attempts — the 503, then the 200 — and shows its history", { timeout: 90_000 }, async () => {
    await track(messageId);
    await eventually(() => receiver.statuses.get(messageId)?.join() === '503,200', 'the 503 and then the 200 at the receiver', 30_000);

    const search = await tributaryUntil(['attempts', '--message-id', messageId, '--json'], (run) => run.code === 0 && (JSON.parse(run.stdout) as AttemptPage).attempts.length === 2, 'both attempts in the log');
    const page = JSON.parse(search.stdout) as AttemptPage;
    conforms(responseSchema(document, '/attempts', 200), page);
    expect(page.attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.status, attempt.targets[0]?.responseBody])).toEqual([
      [2, 'delivered', 200, 'thanks'],
      [1, 'retry', 503, 'busy, try later'],
    ]);

    // The message view waits for the delivery's state, which the indexer writes with the last attempt.
    const shown = await tributaryUntil(['messages', 'show', messageId], (run) => run.stdout.includes('delivery to crm-hooks (source web): delivered'), 'the delivered state');
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toBe(`message ${messageId}`);
    expect(lines[1]).toMatch(/^ {2}source web · track "Signed Up" · user u-cli · received \S+Z · timestamp \S+Z$/);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}web\s+crm-hooks\s+routed\s+-$/));
    expect(lines).toContainEqual(expect.stringMatching(/^delivery to crm-hooks \(source web\): delivered at \S+ after 2 attempts, \S+ after it was received$/));
    const origin = new URL(receiver.url).origin;
    const timeline = lines.slice(lines.findIndex((line) => line.startsWith('delivery to crm-hooks')) + 2);
    expect(timeline[0]).toMatch(/^ {2}\S+Z\s+#1\s+retry\s+503\s+\d+ms\s+webhooks\[0\] http:\/\/127\.0\.0\.1:\d+: HTTP 503; next attempt \S+Z \(tier 300ms\)$/);
    expect(timeline[1]).toMatch(new RegExp(`^ {6}webhooks\\[0\\] ${origin}: http_error 503 in \\d+ms; body "busy, try later"$`));
    expect(timeline[2]).toMatch(/^ {2}\S+Z\s+#2\s+delivered\s+200\s+\d+ms$/);
    expect(timeline[3]).toMatch(new RegExp(`^ {6}webhooks\\[0\\] ${origin}: success 200 in \\d+ms; body "thanks"$`));
    expect(shown.stdout).not.toContain('/hooks');

    const history = JSON.parse((await tributary(['messages', 'show', messageId, '--json'])).stdout) as MessageHistory;
    conforms(responseSchema(document, '/messages/{messageId}', 200), history);
    expect(history.deliveries).toMatchObject([{ destinationId: 'crm-hooks', state: 'delivered', attempts: 2, lastStatus: 200 }]);

    const failed = await tributary(['attempts', '--destination', 'crm-hooks', '--status', '5xx', '--user-id', 'u-cli', '--since', '1h']);
    expect(failed.code).toBe(0);
    expect(failed.stdout.split('\n').filter((line) => line.includes(messageId))).toEqual([expect.stringMatching(/\s+crm-hooks\s+\S+\s+#1\s+retry\s+503\s+/)]);
    expect(failed.stdout.trimEnd().split('\n').at(-1)).toMatch(/^1 attempt from \S+ to \S+, newest first$/);
  });

  it("summarises the destination with the circuit ingest adds, and refuses what the API refuses", { timeout: 60_000 }, async () => {
    // The dispatcher reports its circuits every few seconds; ingest adds the latest to the summary.
    const one = await tributaryUntil(['destinations', 'summary', 'crm-hooks', '--json'], (run) => run.code === 0 && (JSON.parse(run.stdout) as DeliverySummary).circuit !== null, 'a summary with its circuit');
    const summary = JSON.parse(one.stdout) as DeliverySummary;
    conforms(responseSchema(document, '/destinations/{id}/summary', 200), summary);
    expect(summary).toMatchObject({ destinationId: 'crm-hooks', attempts: 2, delivered: 1, failed: 1, successRate: 0.5, retriesPending: 0, circuit: { state: 'closed' } });
    const table = await tributary(['destinations', 'summary']);
    expect(table.stdout.split('\n')[1]).toMatch(/^crm-hooks\s+2\s+50%\s+\S+\s+\S+\s+0\s+0\s+closed$/);
    conforms(responseSchema(document, '/delivery-summary', 200), JSON.parse((await tributary(['destinations', 'summary', '--json'])).stdout));

    // What the CLI does not print, straight from the API: the timeline and a 404.
    const headers = { authorization: `Bearer ${TOKEN}` };
    const timeline = await fetch(`${ingest.url}/admin/v1/destinations/crm-hooks/timeline?bucket=10m`, { headers });
    expect(timeline.status).toBe(200);
    conforms(responseSchema(document, '/destinations/{id}/timeline', 200), await timeline.json());
    const missing = await fetch(`${ingest.url}/admin/v1/messages/nope`, { headers });
    expect(missing.status).toBe(404);
    conforms(responseSchema(document, '/messages/{messageId}', 404), await missing.json());

    expect(await tributary(['messages', 'show', 'nope'])).toEqual({ code: 2, stdout: '', stderr: 'tributary: message "nope" is not in the delivery log (not indexed yet, or past retention)\n' });
    const backwards = await tributary(['attempts', '--since', '2026-11-25T11:00:00Z', '--until', '2026-11-25T10:00:00Z']);
    expect(backwards).toEqual({ code: 1, stdout: '', stderr: 'tributary: invalid query: since: must be before until\n  since: must be before until\n' });
  });

  it('follows the live tail until Ctrl-C', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [CLI, 'messages', 'tail', '--source', 'web'], { env: cliEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // The first answer holds the earlier message; a new one appears within the poll.
      await eventually(() => stdout.includes(messageId), 'the tail to show the earlier message', 15_000);
      const next = `${messageId}-next`;
      await track(next);
      await eventually(() => stdout.includes(next), 'the tail to show the new message', 15_000);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).toBe('');
      const rows = stdout.trimEnd().split('\n');
      expect(rows[0]).toMatch(/^RECEIVED AT\s+SOURCE\s+TYPE\s+EVENT\s+USER\s+MESSAGE ID$/);
      expect(rows.slice(-2).map((row) => row.split(/\s+/).at(-1))).toEqual([messageId, next]);
      expect(rows.at(-1)).toMatch(/^\S+Z\s+web\s+track\s+Signed Up\s+u-cli\s+/);

      const once = await tributary(['messages', 'tail', '--once', '--json', '--source', 'web']);
      const tailed = once.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as TailMessage);
      for (const message of tailed) conforms(namedSchema('TailMessage'), message);
      expect(tailed.map((message) => message.messageId).slice(-2)).toEqual([messageId, next]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('leaves the admin token out of every service log', () => {
    for (const service of services) expect(readFileSync(service.logFile, 'utf8'), service.name).not.toContain(TOKEN);
  });
});
