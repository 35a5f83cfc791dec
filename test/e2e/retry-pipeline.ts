/**
 * The whole pipeline for retry and dead-letter tests: ingest (with the admin API), router,
 * dispatcher and retry-scheduler as processes in one namespace with one retry ladder, a
 * real webhook receiver (node:http) that answers as the test says, and the tributary CLI.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Analytics } from '@segment/analytics-node';
import { topicNames, type DeadLetter, type TopicNames } from '@tributary/schemas';
import { adminClient, REPO_ROOT, stackEnv, startService, tailTopic, testCodec, testKafka, type RunningService, type TopicTail } from '@tributary/test/harness';

export const ADMIN_TOKEN = 'e2e-retry-admin-token';

export interface ReceivedAttempt {
  messageId: string;
  /** When the request arrived (ms). */
  at: number;
  /** The status answered, or `hang`: none, ever (the connection stays open until `stop`). */
  status: number | 'hang';
}

/** Answers a request for `messageId`, its `attempt`-th (1-based), with an HTTP status — or never (`hang`). */
export type Answer = (messageId: string, attempt: number) => number | 'hang';

/** A receiver's pace: `answerAfterMs` holds every answer that long (a slow receiver that still succeeds). */
export interface ReceiverOptions {
  answerAfterMs?: number;
}

export class Receiver {
  readonly attempts: ReceivedAttempt[] = [];
  private server: Server | undefined;
  private port = 0;

  constructor(
    public answer: Answer,
    private readonly options: ReceiverOptions = {},
  ) {}

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = Date.now();
        const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string };
        const status = this.answer(messageId, this.attemptsFor(messageId).length + 1);
        this.attempts.push({ messageId, at, status });
        if (status === 'hang') return;
        const respond = () => response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
        if (this.options.answerAfterMs === undefined) respond();
        else setTimeout(respond, this.options.answerAfterMs);
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  attemptsFor(messageId: string): ReceivedAttempt[] {
    return this.attempts.filter((attempt) => attempt.messageId === messageId);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

export class RetryPipeline {
  readonly topics: TopicNames;
  readonly services = new Map<string, RunningService>();
  deadLetters: TopicTail<DeadLetter> | undefined;

  constructor(
    readonly namespace: string,
    readonly ladder: { RETRY_LADDER: string; RETRY_WINDOW: string },
    /** More settings for every service (circuit breaker settings, say). */
    readonly extraEnv: Record<string, string> = {},
  ) {
    this.topics = topicNames(namespace);
  }

  get ingest(): RunningService {
    return this.services.get('ingest')!;
  }

  async start(): Promise<void> {
    const env = { ...stackEnv(this.namespace), ADMIN_TOKEN, ...this.ladder, ...this.extraEnv };
    for (const name of ['ingest', 'router', 'dispatcher', 'retry-scheduler'] as const) {
      this.services.set(name, await startService(name, { env: { ...env, INSTANCE_ID: `e2e-${name}` } }));
    }
    const codec = testCodec();
    this.deadLetters = await tailTopic(testKafka(), this.topics.deadLetters, (value) => codec.decode<DeadLetter>('dlq', value));
  }

  async stop(): Promise<void> {
    await this.deadLetters?.stop();
    for (const service of [...this.services.values()].reverse()) await service.stop();
  }

  readonly admin = adminClient(() => this.ingest.url, ADMIN_TOKEN);

  /** A source and a Webhooks destination posting to `url`, created through the admin API. */
  async connect(destinationId: string, url: string): Promise<string> {
    const writeKey = `wk_${this.namespace}`;
    await this.admin('PUT', '/sources/web', { name: 'Web', writeKey });
    await this.admin('PUT', `/destinations/${destinationId}`, { type: 'webhooks', sources: ['web'], settings: { webhooks: [{ url }] } });
    return writeKey;
  }

  /** Sends Track calls with the Segment Node library, as an application would; returns their message ids. */
  async track(writeKey: string, events: number): Promise<string[]> {
    const analytics = new Analytics({ writeKey, host: this.ingest.url, flushAt: events, flushInterval: 100, maxRetries: 2 });
    const sent = Array.from(
      { length: events },
      (_, index) =>
        new Promise<string>((resolve, reject) =>
          analytics.track({ userId: `user-${index}`, event: 'Order Completed', properties: { index } }, (error, ctx) =>
            error || !ctx ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(ctx.event.messageId!),
          ),
        ),
    );
    await analytics.closeAndFlush({ timeout: 30_000 });
    return Promise.all(sent);
  }

  /** `perSecond` events a second for `seconds` seconds, each second's sent at once. */
  async trackEverySecond(writeKey: string, perSecond: number, seconds: number): Promise<void> {
    for (let second = 0; second < seconds; second++) {
      const started = Date.now();
      await this.track(writeKey, perSecond);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (Date.now() - started))));
    }
  }

  /** Runs the built `tributary` CLI against this pipeline's ingest. */
  cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(REPO_ROOT, 'clients', 'cli', 'dist', 'cli.js'), ...args],
        { env: { PATH: process.env.PATH ?? '', TRIBUTARY_URL: this.ingest.url, TRIBUTARY_ADMIN_TOKEN: ADMIN_TOKEN } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }
}
