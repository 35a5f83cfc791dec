/**
 * A compacted topic materialised into memory and kept current: every service reads the
 * config topic this way, so a change made through the admin API reaches all of them
 * without a restart. The reader joins a consumer group of its own (unique per process,
 * never committing) so each process sees every partition from the beginning.
 *
 * `start()` resolves once the reader has caught up with the end offsets the topic had
 * when it started; `waitForOffset()` gives read-your-writes to a process that has just
 * produced to the topic, and `catchUpToEnd()` the same for what other processes wrote.
 * End offsets are read with read_committed, so an open transaction is not waited for.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from './logger.js';
import { undecodableCause } from './quarantine.js';
import { untilSuccess } from './patience.js';
import { SupervisedConsumer } from './supervised-consumer.js';
import { withTimeout } from './topic-scan.js';

/** A `decode` function throws this for a value that decoded but can never be used: it is skipped, not retried. */
export class TableRecordInvalid extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TableRecordInvalid';
  }
}

export type TableListener<V> = (key: string, value: V | undefined, previous: V | undefined) => void;

export interface TableOptions<V> {
  kafka: Kafka;
  topic: string;
  logger: Logger;
  /**
   * Turns a record value into V. Throws AvroDecodeError (or TableRecordInvalid) for a value it
   * can never read — skipped and logged — and anything else for a failure worth retrying.
   */
  decode(value: Buffer): Promise<V>;
  groupPrefix?: string;
  /**
   * false: keep no map, only notify listeners (`get`/`entries` stay empty, `previous` is
   * undefined) — for callers that hold a bounded view of their own, such as the router's
   * time-limited dedup state. Default true.
   */
  materialize?: boolean;
}

export class CompactedTopicReader<V> {
  private readonly state = new Map<string, V>();
  private readonly listeners = new Set<TableListener<V>>();
  private readonly applied = new Map<number, bigint>();
  private readonly waiters: Array<{ partition: number; offset: bigint; resolve: () => void }> = [];
  private consumer: SupervisedConsumer | undefined;
  private targets = new Map<number, bigint>();
  private caughtUp = false;
  private onCaughtUp: (() => void) | undefined;
  /**
   * The admin connection `catchUpToEnd` reads end offsets through, kept between calls: the
   * indexer checks before every chunk it routes (config-freshness.ts), and a connection per
   * check was a TCP connection, ApiVersions and Metadata (and, in production, a TLS and SASL
   * handshake) several times a second.
   */
  private offsetsAdmin: Promise<Admin> | undefined;
  /** Ends the wait for the broker at start when `stop()` is called. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: TableOptions<V>) {}

  get size(): number {
    return this.state.size;
  }

  get(key: string): V | undefined {
    return this.state.get(key);
  }

  entries(): IterableIterator<[string, V]> {
    return this.state.entries();
  }

  values(): IterableIterator<V> {
    return this.state.values();
  }

  isCaughtUp(): boolean {
    return this.caughtUp;
  }

  onChange(listener: TableListener<V>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {
    const { kafka, topic, logger } = this.options;
    // Waited out like every start-up step: with the broker away here, the service used to exit
    // although it rides out the same outage once running.
    this.targets = await untilSuccess(() => this.lastOffsets(), { logger, doing: `reading the end offsets of ${topic}`, signal: this.stopping.signal });

    const caughtUp = new Promise<void>((resolve) => (this.onCaughtUp = resolve));
    this.checkCaughtUp();

    const groupId = `${this.options.groupPrefix ?? 'tributary'}.table.${topic}.${randomUUID()}`;
    this.consumer = new SupervisedConsumer({
      kafka,
      groupId,
      // The shared fetch wait (CONSUMER_DEFAULTS): these topics are quiet nearly always, and a
      // new record ends a waiting fetch at once (test/bench/ANALYSIS.md). The group is this
      // reader's alone (a random id): it never rebalances against anyone, so its heartbeats only
      // keep it alive — one every 3 s, a third of the session, is enough. Every service reads one
      // to three tables; at one a second they were a third of an idle pipeline's Kafka requests.
      config: { sessionTimeout: 10_000, heartbeatInterval: 3_000 },
      logger,
      name: `table ${topic}`,
      setup: async (consumer) => {
        // Progress comes from batch-end events rather than messages, because a batch of only
        // transaction control records carries no message but still moves the position.
        consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
          if (payload.topic === topic) this.advance(payload.partition, BigInt(payload.lastOffset));
        });
        // The group never commits, so a consumer that joins again — a replacement, or kafkajs
        // restarting this one after a broker outage — would read the topic from its start:
        // minutes for the router's dedup topic, with routing waiting on it. It resumes after
        // what was applied instead (and applyBatch skips what it has applied, should a fetch
        // start earlier all the same).
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
          for (const partition of payload.memberAssignment[topic] ?? []) {
            const applied = this.applied.get(partition);
            if (applied === undefined) continue;
            try {
              consumer.seek({ topic, partition, offset: String(applied + 1n) });
            } catch (error) {
              logger.warn({ err: error, topic, partition }, 'could not resume the table after its last applied record; reading it again from the start');
            }
          }
        });
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ autoCommit: false, eachBatch: async ({ batch }) => this.applyBatch(batch.partition, batch.highWatermark, batch.messages) });
      },
    });
    await this.consumer.start();
    await caughtUp;
    logger.info({ topic, entries: this.options.materialize === false ? undefined : this.state.size }, 'table caught up');
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.consumer?.stop();
    this.consumer = undefined;
    await this.dropOffsetsAdmin();
  }

  /**
   * Applies a batch. A record that can never be decoded is logged and skipped (it must not
   * stop a service from starting); one that may decode later (the registry unreachable)
   * fails the batch, which kafkajs fetches again — skipping it would lose a config change.
   */
  private async applyBatch(partition: number, highWatermark: string, messages: KafkaMessage[]): Promise<void> {
    const { topic, logger } = this.options;
    let applied = this.applied.get(partition);
    // A partition that now ends before what was applied was deleted and created again (or
    // truncated): its offsets start over, and none of them has been applied.
    if (applied !== undefined && BigInt(highWatermark) <= applied) {
      logger.warn({ topic, partition, applied: String(applied), highWatermark }, 'the table\'s topic starts over (recreated or truncated): reading it again');
      this.applied.delete(partition);
      applied = undefined;
    }
    for (const message of messages) {
      // Applied already: a fetch that started earlier than the resume point (a seek that did
      // not take) re-applying old values would take the table back in time, a deleted
      // destination brought back, while catchUpToEnd went on saying it is current.
      if (applied !== undefined && BigInt(message.offset) <= applied) continue;
      const key = message.key?.toString('utf8');
      if (key === undefined) {
        logger.warn({ topic, offset: message.offset }, 'record without key ignored');
        continue;
      }
      let value: V | undefined;
      if (message.value !== null && message.value.length > 0) {
        try {
          value = await this.options.decode(message.value);
        } catch (error) {
          if (!undecodableCause(error) && !(error instanceof TableRecordInvalid)) throw error;
          logger.error({ err: error, topic, key, offset: message.offset }, 'unreadable record skipped');
          continue;
        }
      }
      this.apply(key, value);
    }
  }

  /**
   * Resolves once every record committed to the topic when it is called has been applied:
   * a process that must act on what others wrote (the router, when a rebalance hands it
   * partitions another instance was routing) waits for this first.
   */
  async catchUpToEnd(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const kept = this.connectedOffsetsAdmin();
    let targets: Map<number, bigint>;
    try {
      // Bounded too: with the broker away, connecting and asking retry for longer than a caller waits.
      targets = await withTimeout(this.lastOffsets(kept), timeoutMs, `reading the end offsets of ${this.options.topic}`);
    } catch (error) {
      // A connection that did not answer in time may be a dead one: the next call connects afresh.
      await this.dropOffsetsAdmin(kept);
      throw error;
    }
    await Promise.all([...targets].map(([partition, offset]) => this.waitForOffset(partition, offset, Math.max(1, deadline - Date.now()))));
  }

  /**
   * The offset of the last record (or transaction marker) of each non-empty partition, read
   * through `kept` or, without it, an admin connection of its own (`start`: most readers never
   * ask again).
   */
  private async lastOffsets(kept?: Promise<Admin>): Promise<Map<number, bigint>> {
    const last = new Map<number, bigint>();
    const admin = kept ? await kept : this.options.kafka.admin();
    if (!kept) await admin.connect();
    try {
      for (const { partition, high, low } of await admin.fetchTopicOffsets(this.options.topic)) {
        if (BigInt(high) > BigInt(low)) last.set(partition, BigInt(high) - 1n);
      }
    } catch (error) {
      // A kept connection that failed is not trusted again: the next call connects afresh.
      if (kept) await this.dropOffsetsAdmin(kept);
      throw error;
    } finally {
      if (!kept) await admin.disconnect();
    }
    return last;
  }

  private connectedOffsetsAdmin(): Promise<Admin> {
    if (this.offsetsAdmin) return this.offsetsAdmin;
    const admin = this.options.kafka.admin();
    const connected = admin.connect().then(
      () => admin,
      async (error: unknown) => {
        if (this.offsetsAdmin === connected) this.offsetsAdmin = undefined;
        await admin.disconnect().catch(() => undefined);
        throw error;
      },
    );
    this.offsetsAdmin = connected;
    return connected;
  }

  /** Disconnects the kept admin connection — `which`, unless another has replaced it since. */
  private async dropOffsetsAdmin(which = this.offsetsAdmin): Promise<void> {
    if (which === undefined || which !== this.offsetsAdmin) return;
    this.offsetsAdmin = undefined;
    await which.then((admin) => admin.disconnect()).catch(() => undefined);
  }

  /** Resolves once the record at `offset` of `partition` has been applied. */
  waitForOffset(partition: number, offset: string | bigint, timeoutMs = 10_000): Promise<void> {
    const target = BigInt(offset);
    if ((this.applied.get(partition) ?? -1n) >= target) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new Error(`${this.options.topic}[${partition}] did not reach offset ${target} within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        partition,
        offset: target,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  private apply(key: string, value: V | undefined): void {
    const previous = this.state.get(key);
    if (this.options.materialize !== false) {
      if (value === undefined) this.state.delete(key);
      else this.state.set(key, value);
    }
    for (const listener of this.listeners) {
      try {
        listener(key, value, previous);
      } catch (error) {
        this.options.logger.error({ err: error, key }, 'table listener failed');
      }
    }
  }

  private advance(partition: number, offset: bigint): void {
    if ((this.applied.get(partition) ?? -1n) < offset) this.applied.set(partition, offset);
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      const waiter = this.waiters[index]!;
      if (waiter.partition === partition && waiter.offset <= offset) {
        this.waiters.splice(index, 1);
        waiter.resolve();
      }
    }
    this.checkCaughtUp();
  }

  private checkCaughtUp(): void {
    if (this.caughtUp) return;
    for (const [partition, target] of this.targets) {
      if ((this.applied.get(partition) ?? -1n) < target) return;
    }
    this.caughtUp = true;
    this.onCaughtUp?.();
  }
}
