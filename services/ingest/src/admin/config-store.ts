/**
 * The Kafka edge of configuration changes. A change is planned against this process's
 * live ConfigView once it has caught up with the config topic's end, written to the
 * compacted config topic in one produce request (one record batch on its single partition,
 * so a crash cannot leave half an apply), and answered only once the view has read it back:
 * a GET right after a write sees it, here and — within the time it takes them to read one
 * record — in every other service.
 */
import type { Message, Producer } from 'kafkajs';
import type { ConfigEntry } from '@tributary/schemas';
import { configKey, type AvroCodec, type ConfigChange, type ConfigState, type ConfigView, type Logger } from '@tributary/shared';
import type { ConfigPlan } from './config-plan.js';
import { withDeadline } from './deadline.js';
import { AdminError } from './errors.js';
import { SerialQueue } from './serial.js';

/** What the store uses of the ConfigView: its state, and catching its reader up with the topic. */
export interface ConfigStoreView {
  state(): ConfigState;
  reader: Pick<ConfigView['reader'], 'catchUpToEnd'>;
}

export interface ConfigStoreOptions {
  view: ConfigStoreView;
  /** Idempotent, acks=all. */
  producer: Pick<Producer, 'send'>;
  codec: Pick<AvroCodec, 'encode'>;
  topic: string;
  logger: Logger;
  /** How long a caller waits for the write to be acknowledged and read back. */
  timeoutMs: number;
}

export interface CommitOutcome<T> {
  result: T;
  changes: ConfigChange[];
  /** Records written to the config topic (0 for a dry run or when nothing changed). */
  written: number;
}

export class ConfigStore {
  private readonly queue = new SerialQueue();

  constructor(private readonly options: ConfigStoreOptions) {}

  state(): ConfigState {
    return this.options.view.state();
  }

  /**
   * Plans against the current state and writes the plan, one commit at a time. A dry run,
   * or a plan that changes nothing, writes nothing — so applying a document twice leaves
   * the topic as the first apply left it.
   */
  commit<T>(plan: (state: ConfigState) => ConfigPlan<T>, options: { dryRun?: boolean } = {}): Promise<CommitOutcome<T>> {
    const deadline = Date.now() + this.options.timeoutMs;
    return withDeadline(
      this.queue.run(() => this.commitNow(plan, options.dryRun ?? false, deadline)),
      this.options.timeoutMs,
      'the config change',
    );
  }

  /** Resolves once no commit is in flight (used at shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async commitNow<T>(plan: (state: ConfigState) => ConfigPlan<T>, dryRun: boolean, deadline: number): Promise<CommitOutcome<T>> {
    const { view, producer, codec, topic, logger, timeoutMs } = this.options;
    await this.catchUp(deadline);
    const planned = plan(view.state());
    if (dryRun || planned.writes.length === 0) return { result: planned.result, changes: planned.changes, written: 0 };
    const updatedAt = Date.now();
    const messages: Message[] = planned.writes.map((write) => ({
      key: configKey(write.kind, write.id),
      value: write.entity ? codec.encode(topic, { entity: write.entity, updatedAt } satisfies ConfigEntry) : null,
    }));
    try {
      await producer.send({ topic, messages });
      await view.reader.catchUpToEnd(timeoutMs);
    } catch (error) {
      // The records may be in the topic whichever step failed: the caller is told what the
      // deadline tells it (not a 500, which would say the change failed), and the next commit
      // catches up before it plans, so it decides against them if they were written.
      logger.warn({ err: error, changes: planned.changes }, 'config change not confirmed');
      throw new AdminError(
        503,
        'kafka_unavailable',
        `the config change was not confirmed by Kafka within ${timeoutMs / 1000} s; it may still take effect, so read the state back before retrying`,
      );
    }
    // Changes name ids and fields only, never values, so secrets cannot reach the log.
    logger.info({ changes: planned.changes }, 'configuration changed');
    return { result: planned.result, changes: planned.changes, written: messages.length };
  }

  /**
   * Brings the view up to the config topic's end before a plan is made. The previous commit
   * may have been answered 503 with its write sent but not yet read back (its catch-up timed
   * out), and another ingest may have written since: a plan made against the view as it
   * stood then decided against a past state (a source deleted as unused right after a
   * destination naming it was written). Nothing has been written for this request yet, so a
   * failure here is the 503 a slow Kafka gets anyway, and the caller may simply retry.
   */
  private async catchUp(deadline: number): Promise<void> {
    const { view, timeoutMs } = this.options;
    const remaining = deadline - Date.now();
    try {
      // A request that waited out its deadline behind others is not planned at all: its
      // caller has been told it was not confirmed, and it should not go on to write later.
      if (remaining <= 0) throw new Error('the deadline passed while the change waited its turn');
      await view.reader.catchUpToEnd(remaining);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'config view did not catch up with the config topic; change not planned');
      throw new AdminError(
        503,
        'kafka_unavailable',
        `the config change was not made: this ingest could not read the config topic up to its end within ${timeoutMs / 1000} s; nothing was written, so retry in a moment`,
      );
    }
  }
}
