/**
 * The Kafka edge of configuration changes. A change is planned against this process's
 * live ConfigView, written to the compacted config topic in one produce request (one
 * record batch on its single partition, so a crash cannot leave half an apply), and
 * answered only once the view has read it back: a GET right after a write sees it, here
 * and — within the time it takes them to read one record — in every other service.
 */
import type { Message, Producer } from 'kafkajs';
import type { ConfigEntry } from '@tributary/schemas';
import { configKey, type AvroCodec, type ConfigChange, type ConfigState, type ConfigView, type Logger } from '@tributary/shared';
import type { ConfigPlan } from './config-plan.js';
import { withDeadline } from './deadline.js';
import { SerialQueue } from './serial.js';

export interface ConfigStoreOptions {
  view: ConfigView;
  /** Idempotent, acks=all. */
  producer: Producer;
  codec: AvroCodec;
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
    return withDeadline(
      this.queue.run(() => this.commitNow(plan, options.dryRun ?? false)),
      this.options.timeoutMs,
      'the config change',
    );
  }

  /** Resolves once no commit is in flight (used at shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async commitNow<T>(plan: (state: ConfigState) => ConfigPlan<T>, dryRun: boolean): Promise<CommitOutcome<T>> {
    const { view, producer, codec, topic, logger, timeoutMs } = this.options;
    const planned = plan(view.state());
    if (dryRun || planned.writes.length === 0) return { result: planned.result, changes: planned.changes, written: 0 };
    const updatedAt = Date.now();
    const messages: Message[] = planned.writes.map((write) => ({
      key: configKey(write.kind, write.id),
      value: write.entity ? codec.encode(topic, { entity: write.entity, updatedAt } satisfies ConfigEntry) : null,
    }));
    await producer.send({ topic, messages });
    await view.reader.catchUpToEnd(timeoutMs);
    // Changes name ids and fields only, never values, so secrets cannot reach the log.
    logger.info({ changes: planned.changes }, 'configuration changed');
    return { result: planned.result, changes: planned.changes, written: messages.length };
  }
}
