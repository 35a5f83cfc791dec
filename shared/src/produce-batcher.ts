/**
 * Group commit of requests into Kafka transactions. Kafka makes a write to several
 * partitions atomic only inside a transaction, and a transaction costs a few round trips
 * whatever its size, so one transaction per request would cap throughput at the
 * broker's transaction rate. Instead, one transaction is in flight at a time; the
 * records of requests that arrive meanwhile wait and are committed together in the
 * next one. Each request waits for the outcome of the transaction that holds its
 * records: commit resolves it, abort or error rejects it — every request in that
 * transaction fails, so none is acknowledged for records that were not written.
 *
 * A request's records are never split across transactions. A transaction takes queued
 * requests until the record or byte cap would be passed (a request larger than a cap alone
 * still gets a transaction of its own) — one of each party waiting in turn, a party just
 * served going to the back, each party's in the order they came. The party is what `submit`
 * is told (ingest: the source). In arrival order, a source with dozens of 476 KB batches
 * waiting put another source's one-event request behind all of them: answered at p50 0.8 s
 * under such a flood, 0.25 s once the transactions took turns (ingest-flood.it.test.ts).
 *
 * Bytes waiting or in flight are bounded (`maxPendingBytes`): beyond it a request is
 * refused at once (BatcherFullError → 503 with Retry-After) instead of queueing without end
 * while Kafka is slow or away. Past the bound a party holding less than an eighth of it
 * still gets in, up to a quarter more in all (`PARTY_HEADROOM`): a party whose backlog filled
 * the bound is refused, not every party behind it. With Kafka away, the bound and its
 * headroom fill and everyone is refused, as they must be.
 *
 * A request waits at most `timeoutMs`. Queued, it is withdrawn and nothing of it is
 * written; already inside a transaction, its caller is answered with the timeout but the
 * transaction may still commit — the caller retries, and the router drops the repeat by
 * messageId.
 */

import { PartyTurns } from './party-turns.js';

export interface ProduceRecord {
  key: Buffer;
  value: Buffer;
  /** The topic, for a writer that serves more than one (ingest's two lanes); otherwise the writer's own. */
  topic?: string;
}

/** Writes records in one transaction: resolves once committed, rejects if aborted or failed. */
export type TransactionalSend = (records: ProduceRecord[]) => Promise<void>;

export interface TransactionReport {
  records: number;
  bytes: number;
  requests: number;
  durationMs: number;
  error?: unknown;
}

export interface ProduceBatcherOptions {
  send: TransactionalSend;
  maxRecords: number;
  maxBytes: number;
  /** Bytes of records waiting or in a transaction; beyond it `submit` refuses at once. */
  maxPendingBytes: number;
  timeoutMs: number;
  onTransaction?: (report: TransactionReport) => void;
  /**
   * Told `true` when a transaction has been in flight for `timeoutMs` — Kafka is not
   * acknowledging, and every request now waiting will time out — and `false` when that
   * transaction ends, committed or not. Readiness follows it: how soon kafkajs gives a stuck
   * transaction up depends on its retries, not on this service's deadline.
   */
  onStalled?: (stalled: boolean) => void;
}

export class ProduceTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`Kafka did not acknowledge the records within ${timeoutMs} ms`);
    this.name = 'ProduceTimeoutError';
  }
}

export class ProduceFailedError extends Error {
  constructor(cause: unknown) {
    super(`the Kafka write failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ProduceFailedError';
  }
}

export class BatcherFullError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes are already waiting for Kafka`);
    this.name = 'BatcherFullError';
  }
}

export class BatcherClosedError extends Error {
  constructor() {
    super('the service is shutting down');
    this.name = 'BatcherClosedError';
  }
}

interface Waiting {
  party: string;
  records: ProduceRecord[];
  bytes: number;
  settled: boolean;
  timer: NodeJS.Timeout;
  resolve(): void;
  reject(error: Error): void;
}

function sizeOf(records: ProduceRecord[]): number {
  let bytes = 0;
  for (const record of records) bytes += record.key.length + record.value.length;
  return bytes;
}

/** A party holding less than this share of the bound may submit past it … */
const LIGHT_PARTY_SHARE = 1 / 8;
/** … up to this many times the bound in all. */
const PARTY_HEADROOM = 1.25;

export class ProduceBatcher {
  /** Waiting requests, taken one party at a time. */
  private readonly waiting = new PartyTurns<Waiting>();
  private inFlight: Promise<void> | undefined;
  private closed = false;
  private drained: (() => void) | undefined;
  private pendingBytesCount = 0;
  private readonly pendingByParty = new Map<string, number>();

  constructor(private readonly options: ProduceBatcherOptions) {}

  /** Bytes of records waiting or in a transaction. */
  get pendingBytes(): number {
    return this.pendingBytesCount;
  }

  /** Whether a request of `party` (unset: of a party holding everything waiting) would be refused for lack of room now. */
  isFull(party?: string): boolean {
    const { maxPendingBytes } = this.options;
    if (this.pendingBytesCount < maxPendingBytes) return false;
    return !(this.isLight(party) && this.pendingBytesCount < maxPendingBytes * PARTY_HEADROOM);
  }

  /** A party holding little of what is waiting, which may go past the bound into the headroom. */
  private isLight(party: string | undefined): boolean {
    return party !== undefined && (this.pendingByParty.get(party) ?? 0) < this.options.maxPendingBytes * LIGHT_PARTY_SHARE;
  }

  /** Requests waiting for a transaction, not counting those in the one in flight. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Resolves when the records are committed; rejects with ProduceTimeoutError, ProduceFailedError or BatcherClosedError.
   * `party`: whose turn the request waits in (requests of one party keep their order).
   */
  submit(records: ProduceRecord[], party = ''): Promise<void> {
    if (this.closed) return Promise.reject(new BatcherClosedError());
    if (records.length === 0) return Promise.resolve();
    const bytes = sizeOf(records);
    // One request alone may exceed the bound (it is capped elsewhere); otherwise the bound holds,
    // or for a light party the headroom.
    const { maxPendingBytes } = this.options;
    const fitsWithin = (limit: number) => this.pendingBytesCount === 0 || this.pendingBytesCount + bytes <= limit;
    if (!fitsWithin(maxPendingBytes) && !(this.isLight(party) && fitsWithin(maxPendingBytes * PARTY_HEADROOM))) {
      return Promise.reject(new BatcherFullError(maxPendingBytes));
    }
    this.pendingBytesCount += bytes;
    this.pendingByParty.set(party, (this.pendingByParty.get(party) ?? 0) + bytes);
    return new Promise<void>((resolve, reject) => {
      const waiting: Waiting = {
        party,
        records,
        bytes,
        settled: false,
        timer: setTimeout(() => this.expire(waiting), this.options.timeoutMs),
        resolve,
        reject,
      };
      this.waiting.push(party, waiting);
      this.pump();
    });
  }

  /** Refuses new requests and resolves once every accepted one has its outcome. */
  close(): Promise<void> {
    this.closed = true;
    if (!this.inFlight && this.waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.drained = resolve));
  }

  private pump(): void {
    if (this.inFlight) return;
    if (this.waiting.size === 0) {
      this.drained?.();
      return;
    }
    const group = this.takeGroup();
    this.inFlight = this.commit(group).finally(() => {
      this.inFlight = undefined;
      this.pump();
    });
  }

  private takeGroup(): Waiting[] {
    const { maxRecords, maxBytes } = this.options;
    const group: Waiting[] = [];
    let records = 0;
    let bytes = 0;
    for (let next = this.waiting.peek(); next !== undefined; next = this.waiting.peek()) {
      const fits = records + next.records.length <= maxRecords && bytes + next.bytes <= maxBytes;
      if (group.length > 0 && !fits) break;
      this.waiting.take();
      group.push(next);
      records += next.records.length;
      bytes += next.bytes;
    }
    return group;
  }

  private async commit(group: Waiting[]): Promise<void> {
    const records = group.length === 1 ? group[0]!.records : group.flatMap((waiting) => waiting.records);
    const bytes = group.reduce((sum, waiting) => sum + waiting.bytes, 0);
    const started = performance.now();
    let error: unknown;
    let failed = false;
    let stalled = false;
    const stallTimer = setTimeout(() => {
      stalled = true;
      this.options.onStalled?.(true);
    }, this.options.timeoutMs);
    try {
      await this.options.send(records);
    } catch (caught) {
      failed = true;
      error = caught;
    } finally {
      clearTimeout(stallTimer);
      if (stalled) this.options.onStalled?.(false);
    }
    const report: TransactionReport = { records: records.length, bytes, requests: group.length, durationMs: performance.now() - started };
    if (failed) report.error = error;
    this.options.onTransaction?.(report);
    for (const waiting of group) {
      if (failed) this.settle(waiting, new ProduceFailedError(error));
      else this.settle(waiting);
    }
  }

  private expire(waiting: Waiting): void {
    this.waiting.remove(waiting.party, waiting);
    this.settle(waiting, new ProduceTimeoutError(this.options.timeoutMs));
    if (this.closed && !this.inFlight && this.waiting.size === 0) this.drained?.();
  }

  private settle(waiting: Waiting, error?: Error): void {
    if (waiting.settled) return;
    waiting.settled = true;
    this.pendingBytesCount -= waiting.bytes;
    const held = (this.pendingByParty.get(waiting.party) ?? 0) - waiting.bytes;
    if (held > 0) this.pendingByParty.set(waiting.party, held);
    else this.pendingByParty.delete(waiting.party);
    clearTimeout(waiting.timer);
    if (error) waiting.reject(error);
    else waiting.resolve();
  }
}
