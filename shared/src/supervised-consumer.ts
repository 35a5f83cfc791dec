/**
 * A kafkajs consumer that outlives broker outages. kafkajs restarts a consumer itself after a
 * retriable failure, but when the failure's cause is not retriable — the broker gone for
 * longer than its retries, a coordinator that moved, a connection refused — it emits CRASH
 * with `restart: false` and stops for good. Every service used to exit then (and under
 * `npm start`, one exiting service stopped the whole stack). Here the crashed consumer is
 * replaced by a new one, with backoff, for as long as it takes; the readiness check is false
 * meanwhile and true again once the new consumer has joined its group. The process never
 * exits for it.
 *
 * `setup` subscribes and runs each consumer, including replacements (and attaches the
 * caller's own event listeners); `onReplace` is told before a replacement starts, and when
 * kafkajs restarts a crashed consumer itself, because whatever the crashed consumer had read
 * and not committed will be read again (and its partitions may go to another instance).
 *
 * `pause`, `resume` and `seek` go through here rather than to `current`: between a crash
 * that kafkajs restarts itself and the restart, its consumer has no group and all three throw,
 * and a timer calling one then took the retry-scheduler down in a broker outage.
 */
import type { Consumer, ConsumerConfig, Kafka, TopicPartitionOffset } from 'kafkajs';
import type { Readiness } from './http.js';
import { createConsumer } from './kafka.js';
import type { Logger } from './logger.js';

export interface SupervisedConsumerOptions {
  kafka: Kafka;
  groupId: string;
  config?: Partial<Omit<ConsumerConfig, 'groupId'>>;
  logger: Logger;
  /** Names the consumer in logs and readiness. */
  name: string;
  readiness?: Readiness;
  setup(consumer: Consumer): Promise<void>;
  onReplace?(): void;
  /** First and longest wait before a replacement. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export class SupervisedConsumer {
  private consumer: Consumer | undefined;
  private stopped = false;
  private failures = 0;
  private replacing: Promise<void> | undefined;

  constructor(private readonly options: SupervisedConsumerOptions) {}

  /** The consumer now running (undefined while one is being replaced). */
  get current(): Consumer | undefined {
    return this.consumer;
  }

  /**
   * Pauses fetching the partitions; false when there is no consumer running (being replaced,
   * or restarted by kafkajs): the next one starts with nothing paused, reading from the
   * committed offsets, so the caller decides again on what it reads.
   */
  pause(partitions: Parameters<Consumer['pause']>[0]): boolean {
    return this.unlessRestarting((consumer) => consumer.pause(partitions));
  }

  /** Resumes fetching the partitions; false when there is no consumer running (see `pause`). */
  resume(partitions: Parameters<Consumer['resume']>[0]): boolean {
    return this.unlessRestarting((consumer) => consumer.resume(partitions));
  }

  /**
   * Moves the next fetch of a partition to `offset`; false when there is no consumer running,
   * whose successor reads from the committed offset instead (see `pause`).
   */
  seek(target: TopicPartitionOffset): boolean {
    return this.unlessRestarting((consumer) => consumer.seek(target));
  }

  /** Connects and runs the first consumer; keeps trying (with backoff) until it runs or `stop()` is called. */
  async start(): Promise<void> {
    this.options.readiness?.set(this.options.name, false);
    for (;;) {
      try {
        await this.launch();
        return;
      } catch (error) {
        if (this.stopped) return;
        await this.backOff(error, 'starting');
        // A stop() during the wait: no consumer may be launched after it.
        if (this.stopped) return;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.disconnect();
  }

  private unlessRestarting(operation: (consumer: Consumer) => void): boolean {
    const consumer = this.consumer;
    if (!consumer) return false;
    try {
      operation(consumer);
      return true;
    } catch (error) {
      if (!isWithoutGroup(error)) throw error;
      this.options.logger.debug({ consumer: this.options.name }, 'consumer restarting: pause, resume or seek left to its restart');
      return false;
    }
  }

  private async launch(): Promise<void> {
    const { kafka, groupId, config, readiness, name, logger, setup } = this.options;
    const consumer = createConsumer(kafka, groupId, config);
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      readiness?.set(name, true);
      if (this.failures > 0) logger.info({ consumer: name, failures: this.failures }, 'consumer back in its group');
      this.failures = 0;
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      readiness?.set(name, false);
      if (payload.restart) {
        logger.warn({ err: payload.error, consumer: name }, 'consumer crashed; kafkajs restarts it');
        // kafkajs has disconnected it, so it left its group: its partitions may be read by
        // another instance already, and it reads from the committed offsets again when it
        // rejoins — what it had read and not committed is the caller's to drop now, as for a
        // replacement, not at the next join seconds later (a dispatcher went on committing
        // outcomes of partitions another one was already delivering).
        this.options.onReplace?.();
        return;
      }
      logger.error({ err: payload.error, consumer: name }, 'consumer crashed and kafkajs gave up on it; replacing it');
      if (!this.stopped && this.consumer === consumer) this.replacing ??= this.replace(consumer).finally(() => (this.replacing = undefined));
    });
    try {
      await consumer.connect();
      await setup(consumer);
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      if (this.consumer === consumer) this.consumer = undefined;
      throw error;
    }
  }

  private async replace(crashed: Consumer): Promise<void> {
    this.consumer = undefined;
    await crashed.disconnect().catch(() => undefined);
    this.options.onReplace?.();
    while (!this.stopped) {
      await this.backOff(undefined, 'replacing');
      if (this.stopped) return;
      try {
        await this.launch();
        this.options.logger.info({ consumer: this.options.name }, 'consumer replaced');
        return;
      } catch (error) {
        this.options.logger.error({ err: error, consumer: this.options.name }, 'replacing the consumer failed; trying again');
      }
    }
  }

  private async backOff(error: unknown, doing: string): Promise<void> {
    const { initialBackoffMs = 500, maxBackoffMs = 30_000, logger, name } = this.options;
    const delay = Math.min(maxBackoffMs, initialBackoffMs * 2 ** Math.min(this.failures, 10));
    this.failures++;
    if (error !== undefined) logger.error({ err: error, consumer: name, retryInMs: delay }, `${doing} the consumer failed; trying again`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** kafkajs's answer to pause, resume or seek on a consumer that is not running in a group. */
export function isWithoutGroup(error: unknown): boolean {
  return error instanceof Error && error.name === 'KafkaJSNonRetriableError' && error.message.startsWith('Consumer group was not initialized');
}
