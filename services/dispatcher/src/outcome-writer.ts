/**
 * The Kafka edge that makes outcomes durable: every `DELIVERY_COMMIT_INTERVAL`, one
 * transaction writes the outcome records of the deliveries settled since (retry records,
 * dead letters, attempt-log records, quarantined records) together with the consumed offsets
 * that pass them, for both lanes' consumer groups — so a crash leaves each delivery either
 * read again with nothing of its outcome written, or written once and never read again.
 * Health records ride along in the same transactions.
 *
 * Failure handling, so that the writer never wedges:
 * - A transaction bounded in bytes (`maxTransactionBytes`), sent in produce requests under
 *   the broker's limit (shared `sendInChunks`); records larger than the broker accepts never
 *   get here (the dispatcher quarantines them first).
 * - A failed transaction is aborted and its records are taken again by the next one, with
 *   backoff, for as long as the broker is away: no delivery is lost, and fetching waits once
 *   the staged bytes reach their bound.
 * - A transaction whose outcome is unknown (its commit failed and so did the abort) is
 *   settled by reading back the groups' committed offsets once a producer is registered again.
 * - A produce error that no retry can fix (a record or request the broker refuses, an
 *   authorisation failure) makes the service unready and stops it for a restart, rather
 *   than leaving every destination silently stuck behind a transaction that can never commit.
 */
import type { Kafka } from 'kafkajs';
import { committedPositions, groupByTopic, sendInChunks, TransactionOutcomeUnknown, type Logger, type Readiness, type TransactionalOutput } from '@tributary/shared';
import { outputBytes, type LedgerBatch, type Output, type PartitionLedger } from './ledger.js';
import type { DispatcherMetrics } from './metrics.js';

/** A ledger and the consumer group whose offsets it commits. */
export interface OwnedLedger {
  ledger: PartitionLedger;
  groupId: string;
}

export interface OutcomeWriterOptions {
  output: TransactionalOutput;
  kafka: Kafka;
  logger: Logger;
  metrics: DispatcherMetrics;
  readiness: Readiness;
  intervalMs: number;
  maxTransactionBytes: number;
  /** The ledgers owned now (revoked ones are gone from it). */
  ledgers(): Iterable<OwnedLedger>;
  /** Records to write with the next transaction, not tied to an offset (health). */
  extras(): Output[];
  /**
   * Fault injection for tests: a pause after the records and offsets are sent and before the
   * commit, so a test can kill the process with a transaction open. 0 in production.
   */
  delayBeforeCommitMs: number;
  /** Puts back extras whose transaction failed. */
  restoreExtras(extras: Output[]): void;
  /** Staged records were written (or found written): their bytes are free again, so a lane may read more. */
  onCommitted(): void;
  onFatal(error: unknown): void;
}

const READINESS_CHECK = 'outcome writer';
const MAX_BACKOFF_MS = 5_000;

/** Protocol errors no retry fixes: the broker refuses the records or this client, whatever happens next. */
const FATAL_ERROR_TYPES = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'INVALID_TOPIC_EXCEPTION',
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'UNSUPPORTED_FOR_MESSAGE_FORMAT',
  'UNSUPPORTED_VERSION',
  'POLICY_VIOLATION',
]);

/** Whether `error` (or what caused it) is a produce error no retry can fix. */
export function isFatalProduceError(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 6; depth++) {
    const type = (current as { type?: unknown }).type;
    if (typeof type === 'string' && FATAL_ERROR_TYPES.has(type)) return true;
    current = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
  }
  return false;
}

/**
 * The shortest time between transactions when one is asked for urgently (a circuit or a
 * congestion changed: the router parks a destination's deliveries once it reads that). Waiting out
 * the whole interval let a burst put another 250 ms of failing deliveries in front of
 * everyone's first attempts; a floor keeps a destination that flaps from turning the interval
 * into back-to-back transactions.
 */
const URGENT_INTERVAL_MS = 50;

interface Pending {
  owned: OwnedLedger;
  batch: LedgerBatch;
}

export class OutcomeWriter {
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private urgent = false;
  /** Sleeping with nothing to commit: any wake starts a transaction. */
  private idle = false;
  private loop: Promise<void> | undefined;
  private failures = 0;
  private lastStart = 0;

  constructor(private readonly options: OutcomeWriterOptions) {}

  start(): void {
    this.options.readiness.set(READINESS_CHECK, true);
    this.loop = this.run();
  }

  /** Something was settled: commit it with the next transaction — `urgent`: as soon as URGENT_INTERVAL_MS allows. */
  wake(urgent = false): void {
    if (urgent && !this.urgent) {
      this.urgent = true;
      this.wakeUp?.();
    } else if (this.idle) this.wakeUp?.();
  }

  /** Commits what is settled now (one last round, retried for at most `timeoutMs`), then stops. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const result = await this.commitOnce();
      if (result === 'idle') return;
      if (result === 'failed') await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
    }
    this.options.logger.warn('shutdown: settled outcomes still uncommitted at the timeout; their deliveries will be read again');
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      // Woken early only when urgent; then the wait is shortened to URGENT_INTERVAL_MS, not skipped.
      let wait = this.lastStart + this.options.intervalMs - Date.now();
      if (wait > 0 && !this.urgent) await this.sleepUnlessWoken(wait, false);
      wait = this.lastStart + URGENT_INTERVAL_MS - Date.now();
      if (this.urgent && wait > 0) await sleep(wait);
      if (this.stopped) return;
      this.urgent = false;
      let result = await this.commitOnce();
      // A transaction's worth still staged (a burst of large retry records): commit it now.
      // Waiting out the interval capped the writer at one transaction an interval, and the
      // staged bytes then reached the lanes' bound and stopped both lanes' reading.
      while (result === 'full' && !this.stopped) result = await this.commitOnce();
      if (result === 'idle' && !this.urgent) await this.sleepUnlessWoken(this.options.intervalMs * 10, true);
      else if (result === 'failed') await sleep(Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(this.failures, 6)));
    }
  }

  /** Sleeps for `ms`; `idle`: any wake ends it, else only an urgent one. */
  private sleepUnlessWoken(ms: number, idle: boolean): Promise<void> {
    this.idle = idle;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    }).finally(() => {
      this.wakeUp = undefined;
      this.idle = false;
    });
  }

  /** One transaction of whatever is ready; 'idle' when there was nothing, 'full' when more was ready than it could take. */
  private async commitOnce(): Promise<'committed' | 'full' | 'idle' | 'failed'> {
    const { output, metrics, logger, maxTransactionBytes } = this.options;
    const pending: Pending[] = [];
    let budget = maxTransactionBytes;
    for (const owned of this.options.ledgers()) {
      const batch = owned.ledger.take(Math.max(1, budget));
      if (!batch) continue;
      pending.push({ owned, batch });
      for (const record of batch.outputs) budget -= outputBytes(record);
    }
    const extras = this.options.extras();
    if (pending.length === 0 && extras.length === 0) return 'idle';
    this.lastStart = Date.now();
    const started = performance.now();
    try {
      await output.run(async (transaction) => {
        await sendInChunks(transaction, groupByTopic([...pending.flatMap(({ batch }) => batch.outputs), ...extras]));
        for (const [groupId, topics] of offsetsByGroup(pending)) {
          await transaction.sendOffsets({ consumerGroupId: groupId, topics });
        }
        if (this.options.delayBeforeCommitMs > 0) await sleep(this.options.delayBeforeCommitMs);
      });
      metrics.transactionDuration.observe((performance.now() - started) / 1000);
      for (const { owned } of pending) owned.ledger.confirm();
      this.succeeded();
      this.options.onCommitted();
      return pending.some(({ batch }) => batch.full) ? 'full' : 'committed';
    } catch (error) {
      metrics.transactionFailures.inc();
      this.failures++;
      this.options.restoreExtras(extras);
      if (error instanceof TransactionOutcomeUnknown) await this.settleUnknown(pending);
      else for (const { owned } of pending) owned.ledger.restore();
      if (isFatalProduceError(error)) {
        this.options.readiness.set(READINESS_CHECK, false);
        logger.fatal({ err: error }, 'the broker refuses the outcome records for good; stopping so the service is restarted');
        this.stopped = true;
        this.options.onFatal(error);
        return 'failed';
      }
      if (this.failures >= 3) this.options.readiness.set(READINESS_CHECK, false);
      logger.error({ err: error, failures: this.failures, records: pending.reduce((n, { batch }) => n + batch.outputs.length, 0) }, 'outcome transaction failed; retrying');
      return 'failed';
    }
  }

  private succeeded(): void {
    if (this.failures > 0) this.options.logger.info({ failures: this.failures }, 'outcome transactions succeed again');
    this.failures = 0;
    this.options.readiness.set(READINESS_CHECK, true);
  }

  /**
   * The transaction may or may not have committed. Once a producer with our id is registered
   * again the broker has finished it one way or the other; the groups' committed offsets then
   * tell which: a batch whose offset was committed was written, the others were not.
   */
  private async settleUnknown(pending: Pending[]): Promise<void> {
    const { output, kafka, logger } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        await output.ensureRegistered();
        const lookups = new Map<string, Map<number, string>>();
        for (const { owned, batch } of pending) {
          const key = `${owned.groupId}\u0000${batch.topic}`;
          if (lookups.has(key)) continue;
          const partitions = pending.filter((p) => p.owned.groupId === owned.groupId && p.batch.topic === batch.topic).map((p) => p.batch.partition);
          lookups.set(key, await committedPositions(kafka, owned.groupId, batch.topic, partitions));
        }
        for (const { owned, batch } of pending) {
          const committed = lookups.get(`${owned.groupId}\u0000${batch.topic}`)?.get(batch.partition);
          if (committed !== undefined && BigInt(committed) >= batch.nextOffset) owned.ledger.confirm();
          else owned.ledger.restore();
        }
        this.options.onCommitted();
        logger.warn({ batches: pending.length }, 'outcome of a failed transaction read back from the committed offsets');
        return;
      } catch (error) {
        logger.error({ err: error }, 'reading back committed offsets after a transaction of unknown outcome failed; retrying');
        await sleep(Math.min(MAX_BACKOFF_MS, 200 * 2 ** Math.min(attempt, 5)));
      }
    }
  }
}

function offsetsByGroup(pending: Pending[]): Map<string, Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>> {
  const groups = new Map<string, Map<string, Array<{ partition: number; offset: string }>>>();
  for (const { owned, batch } of pending) {
    let topics = groups.get(owned.groupId);
    if (!topics) groups.set(owned.groupId, (topics = new Map()));
    let partitions = topics.get(batch.topic);
    if (!partitions) topics.set(batch.topic, (partitions = []));
    partitions.push({ partition: batch.partition, offset: batch.nextOffset.toString() });
  }
  return new Map([...groups].map(([groupId, topics]) => [groupId, [...topics].map(([topic, partitions]) => ({ topic, partitions }))]));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
