/**
 * The whole pipeline on a private Kafka broker and registry (its own ports and data, so
 * stopping the broker disturbs nothing else), the four services as processes under a
 * supervisor that restarts one that exits — as `npm start` and Kubernetes do — and counts
 * every exit, a load of Track calls with known message ids, and a receiver that counts what
 * arrives. What the fault tests need to say "accepted, lost, duplicated".
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { ensureLocalStack, type RunningStack } from '@tributary/deploy/local-stack';
import { adminClient, freePort, startService, type RunningService, type ServiceName } from '../harness/index.js';

export const ADMIN_TOKEN = 'fault-admin-token';
export const SERVICES: readonly ServiceName[] = ['ingest', 'router', 'dispatcher', 'retry-scheduler'];

/** Tries of a private stack whose ports another process took first. */
const STACK_TRIES = 3;

/**
 * A private stack: own ports, own throwaway data dir. A free port is free when asked, not
 * necessarily when the broker binds it a few seconds later (any outgoing connection on the
 * machine may be given it meanwhile): a start that fails on "Address already in use" — it has
 * stopped what it started — is tried again on new ports. Any other failure is thrown at once.
 */
export async function startPrivateStack(log: (line: string) => void): Promise<{ stack: RunningStack; remove(): Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'tributary-fault-'));
    const [kafka, controller, registry] = [await freePort(), await freePort(), await freePort()];
    try {
      const stack = await ensureLocalStack({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), ports: { kafka, controller, registry }, fresh: true, log });
      return {
        stack,
        remove: async () => {
          await stack.stop();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      const taken = error instanceof Error && error.message.includes('Address already in use');
      if (!taken || attempt >= STACK_TRIES) throw error;
      log(`a port of the private stack was taken before it bound it (try ${attempt} of ${STACK_TRIES}): starting again on new ports`);
    }
  }
}

interface Supervised {
  service: RunningService;
  exits: Array<{ at: number; code: number | null }>;
}

/** Runs the services and starts one again, after `restartDelayMs`, whenever it exits. */
export class Supervisor {
  private readonly supervised = new Map<ServiceName, Supervised>();
  private stopping = false;

  constructor(
    private readonly env: Record<string, string>,
    private readonly restartDelayMs = 1_000,
  ) {}

  async start(): Promise<void> {
    for (const name of SERVICES) await this.launch(name);
  }

  service(name: ServiceName): RunningService {
    return this.supervised.get(name)!.service;
  }

  /** Exits of every service since `since`. */
  exitsSince(since: number): Array<{ name: ServiceName; at: number; code: number | null }> {
    return [...this.supervised].flatMap(([name, { exits }]) => exits.filter((exit) => exit.at >= since).map((exit) => ({ name, ...exit })));
  }

  async kill(name: ServiceName): Promise<void> {
    await this.service(name).kill();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const name of [...SERVICES].reverse()) await this.supervised.get(name)?.service.stop();
  }

  private async launch(name: ServiceName): Promise<void> {
    const service = await startService(name, { env: { ...this.env, INSTANCE_ID: `fault-${name}` }, readyTimeoutMs: 120_000 });
    const entry = this.supervised.get(name) ?? { service, exits: [] };
    entry.service = service;
    this.supervised.set(name, entry);
    void service.exited.then(async (code) => {
      entry.exits.push({ at: Date.now(), code });
      if (this.stopping) return;
      await new Promise((resolve) => setTimeout(resolve, this.restartDelayMs));
      if (!this.stopping) await this.launch(name);
    });
  }
}

/** Counts webhook arrivals by messageId. */
export class CountingReceiver {
  readonly arrivals = new Map<string, number>();
  private readonly firstArrivals = new Map<string, number>();
  /** Each repeat of an id: when the id first arrived and when again, to tell which fault caused it. */
  readonly repeats: Array<{ firstAt: number; at: number }> = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId?: string };
          if (messageId) {
            const count = (this.arrivals.get(messageId) ?? 0) + 1;
            this.arrivals.set(messageId, count);
            if (count === 1) this.firstArrivals.set(messageId, Date.now());
            else this.repeats.push({ firstAt: this.firstArrivals.get(messageId)!, at: Date.now() });
          }
        } catch {
          // Not one of ours.
        }
        response.writeHead(200).end('{}');
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * Batches of Track calls at a steady rate to one ingest URL (looked up at each send, since a
 * restarted ingest listens on a new port). Each message has a unique id; those of batches
 * answered 200 are accepted — what must arrive.
 */
export class Load {
  readonly accepted = new Set<string>();
  refused = 0;
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;
  private inFlight = 0;

  constructor(
    private readonly ingestUrl: () => string,
    private readonly writeKey: string,
    private readonly prefix: string,
  ) {}

  /** `rate` events per second, in batches of `batchSize`. */
  start(rate: number, batchSize = 20): void {
    const interval = (1000 * batchSize) / rate;
    this.timer = setInterval(() => void this.send(batchSize), interval);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  private async send(size: number): Promise<void> {
    const ids = Array.from({ length: size }, () => `${this.prefix}-${this.sequence++}`);
    const body = JSON.stringify({ batch: ids.map((messageId, n) => ({ type: 'track', messageId, userId: `user-${n % 50}`, event: 'Fault Probe' })) });
    this.inFlight++;
    const pool = new Pool(this.ingestUrl(), { connections: 1 });
    try {
      const response = await pool.request({
        path: '/v1/batch',
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${this.writeKey}:`).toString('base64')}` },
        body,
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
      await response.body.dump();
      if (response.statusCode === 200) for (const id of ids) this.accepted.add(id);
      else this.refused += size;
    } catch {
      this.refused += size;
    } finally {
      this.inFlight--;
      await pool.close().catch(() => undefined);
    }
  }
}

export interface Accounting {
  accepted: number;
  delivered: number;
  lost: number;
  duplicated: number;
  lostSample: string[];
}

export function account(load: Load, receiver: CountingReceiver): Accounting {
  let delivered = 0;
  let duplicated = 0;
  const lostSample: string[] = [];
  for (const id of load.accepted) {
    const count = receiver.arrivals.get(id) ?? 0;
    if (count > 0) delivered++;
    else if (lostSample.length < 10) lostSample.push(id);
    if (count > 1) duplicated += count - 1;
  }
  return { accepted: load.accepted.size, delivered, lost: load.accepted.size - delivered, duplicated, lostSample };
}

/** Waits until every accepted message arrived (or the time is up); returns the accounting. */
export async function drain(load: Load, receiver: CountingReceiver, timeoutMs: number): Promise<Accounting> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = account(load, receiver);
    if (result.lost === 0 || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export { adminClient };
