/**
 * Group commit of consumed chunks into one transaction (the router's Kafka transactions, the
 * indexer's database and Kafka transactions). A transaction costs about five broker round
 * trips and a commit marker per partition written, whatever its size, so one transaction
 * per partition per fetch made the transaction count follow the partition count instead of
 * the traffic. kafkajs runs `eachBatch` for several partitions at once
 * (`partitionsConsumedConcurrently`); each call hands its chunks here and waits, and the
 * chunks of all of them go into one transaction.
 *
 * One transaction at a time. The first chunk submitted while none is in flight does not
 * start one at once: it waits one turn of the event loop (or `lingerMs`, for a writer that
 * would rather make fewer, larger transactions than answer within milliseconds), in which
 * the other partitions' `eachBatch` calls of the same fetch — started together by kafkajs,
 * decoding without I/O — submit theirs. Chunks submitted while a transaction is in flight
 * wait for the next one. The linger is counted from the oldest waiting chunk's arrival, as a
 * Kafka producer's `linger.ms` is, and ends early once the queue fills a transaction: chunks
 * that already waited behind a transaction, or that are enough for one, do not wait again.
 * (Lingering before every transaction capped a writer behind on its input at `maxRecords`
 * per linger: the indexer caught up on a backlog at 2,000 records per 100 ms plus the write.)
 * A transaction takes queued chunks in arrival order up to `maxRecords` ingest records and
 * `maxBytes` bytes (a chunk larger than that alone still gets a transaction of its own) —
 * those of the highest `priority` first, when one is given: the router's main ingest lane goes ahead of its
 * overflow lane, so a chunk of the main lane waits at most for the transaction in flight. Every
 * priority present gets at least one chunk into each transaction, so none is starved. Each chunk's promise
 * settles with its transaction: resolved once committed, rejected with the transaction's
 * error otherwise — so every `eachBatch` of a failed transaction throws and kafkajs
 * fetches its records again.
 */

export interface GroupCommitOptions<C> {
  /** Records per transaction (the router's ROUTER_MAX_BATCH). */
  maxRecords: number;
  /** How long the first chunk waits for others before a transaction starts; 0 = one event-loop turn. */
  lingerMs?: number;
  records(chunk: C): number;
  /**
   * Bytes per transaction, with `bytes`: what a transaction writes, not only how many records
   * it reads, bounds how long it stays open — and every read_committed reader of the partitions
   * it writes waits for it. A chunk larger than that alone still gets a transaction of its own.
   */
  maxBytes?: number;
  bytes?(chunk: C): number;
  /** Higher goes first; equal priorities keep their arrival order. Default: all equal. */
  priority?(chunk: C): number;
  /**
   * A chunk that yields joins a transaction holding chunks of a higher priority only as the
   * first of its priority: the router's overflow lane, while it is behind, so that the main
   * lane's transactions stay short.
   */
  yields?(chunk: C): boolean;
  /** Commits the chunks in one transaction: resolves once committed, rejects otherwise. */
  commit(chunks: C[]): Promise<void>;
}

interface Waiting<C> {
  chunk: C;
  /** performance.now() at submit. */
  since: number;
  resolve(): void;
  reject(error: unknown): void;
}

export class GroupCommit<C> {
  private queue: Array<Waiting<C>> = [];
  /** A transaction is scheduled or in flight. */
  private busy = false;
  /** The timer of a transaction scheduled to start when the linger ends. */
  private lingering: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: GroupCommitOptions<C>) {}

  /** Resolves once the transaction holding the chunk committed; rejects if it did not. */
  submit(chunk: C): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ chunk, since: performance.now(), resolve, reject });
      if (this.lingering !== undefined && this.fillsTransaction()) {
        clearTimeout(this.lingering);
        this.lingering = undefined;
        setImmediate(() => void this.commitNext());
      } else {
        this.schedule();
      }
    });
  }

  private schedule(): void {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const wait = this.lingerLeft();
    if (wait > 0) this.lingering = setTimeout(() => void this.commitNext(), wait);
    else setImmediate(() => void this.commitNext());
  }

  /** What is left of the oldest waiting chunk's linger; 0 once the queue fills a transaction. */
  private lingerLeft(): number {
    const linger = this.options.lingerMs ?? 0;
    const oldest = this.queue[0];
    if (linger <= 0 || oldest === undefined || this.fillsTransaction()) return 0;
    return Math.max(0, oldest.since + linger - performance.now());
  }

  private fillsTransaction(): boolean {
    const { maxRecords, records, maxBytes = Infinity, bytes } = this.options;
    let total = 0;
    let totalBytes = 0;
    for (const { chunk } of this.queue) {
      total += records(chunk);
      totalBytes += bytes ? bytes(chunk) : 0;
      if (total >= maxRecords || totalBytes >= maxBytes) return true;
    }
    return false;
  }

  private async commitNext(): Promise<void> {
    this.lingering = undefined;
    const group = this.take();
    try {
      await this.options.commit(group.map(({ chunk }) => chunk));
      for (const waiting of group) waiting.resolve();
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
    }
    this.busy = false;
    // Deferred again, so that the calls this transaction just answered can hand over
    // their next chunks before the next transaction starts.
    this.schedule();
  }

  private take(): Array<Waiting<C>> {
    const { maxRecords, records, maxBytes = Infinity, bytes, priority, yields } = this.options;
    // Array.prototype.sort is stable: arrival order holds within a priority.
    const ordered = priority ? [...this.queue].sort((a, b) => priority(b.chunk) - priority(a.chunk)) : this.queue;
    // Each priority present gets at least its first chunk, even past maxRecords: filled up with
    // the main lane's chunks first, a transaction never had room for an overflow chunk, and
    // while the main lane kept handing some over the overflow lane was never routed at all.
    // Within a priority, chunks are taken in order until one does not fit — or, for chunks that
    // yield, after the first when a higher priority is in the transaction.
    const started = new Set<number>();
    const closed = new Set<number>();
    const taken: Array<Waiting<C>> = [];
    let top: number | undefined;
    let total = 0;
    let totalBytes = 0;
    for (const waiting of ordered) {
      const level = priority ? priority(waiting.chunk) : 0;
      if (closed.has(level)) continue;
      const size = records(waiting.chunk);
      const chunkBytes = bytes ? bytes(waiting.chunk) : 0;
      if (started.has(level)) {
        const yielding = top !== undefined && level < top && (yields?.(waiting.chunk) ?? false);
        if (yielding || total + size > maxRecords || totalBytes + chunkBytes > maxBytes) {
          closed.add(level);
          continue;
        }
      }
      started.add(level);
      top ??= level;
      total += size;
      totalBytes += chunkBytes;
      taken.push(waiting);
    }
    const chosen = new Set(taken);
    this.queue = this.queue.filter((waiting) => !chosen.has(waiting));
    return taken;
  }
}
