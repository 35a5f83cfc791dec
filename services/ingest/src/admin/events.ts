/**
 * The admin requests that become messages on the ingest topic: user deletions and
 * audience syncs. Each is planned against the current state and written in one
 * transaction; syncs then wait until this process's audience table has read the new state
 * back, so the next sync of the same audience compares with it.
 */
import { randomUUID } from 'node:crypto';
import type { IngestMessage, TopicNames } from '@tributary/schemas';
import type { AvroCodec, ConfigView, Logger, TransactionalOutput } from '@tributary/shared';
import { planAudienceSync } from './audience-plan.js';
import type { AudienceTable } from './audience-table.js';
import { withDeadline } from './deadline.js';
import { planDeletion } from './deletion-plan.js';
import { SerialQueue } from './serial.js';

export interface DeletionOutcome {
  userId: string;
  messages: Array<{ sourceId: string; messageId: string }>;
  skipped: Array<{ sourceId: string; reason: string }>;
}

export interface AudienceSyncOutcome {
  audience: string;
  trait: string;
  firstSync: boolean;
  added: number;
  removed: number;
  unchanged: number;
  /** Identify messages written (one per added or removed user). */
  messages: number;
}

export interface AdminEventsOptions {
  writer: TransactionalOutput;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigView;
  audiences: AudienceTable;
  logger: Logger;
  timeoutMs: number;
}

export class AdminEvents {
  private readonly queue = new SerialQueue();

  constructor(private readonly options: AdminEventsOptions) {}

  deleteUser(body: unknown): Promise<DeletionOutcome> {
    const { writer, config, logger, timeoutMs } = this.options;
    const work = this.queue.run(async () => {
      const plan = planDeletion(config.state(), body, Date.now(), randomUUID);
      if (plan.messages.length > 0) await writer.write([{ topic: this.options.topics.ingest, messages: plan.messages.map((message) => this.ingestRecord(message)) }]);
      const messages = plan.messages.map(({ sourceId, messageId }) => ({ sourceId, messageId }));
      // The user id stays out of the log: a deletion request is about removing it.
      logger.info({ messages, skipped: plan.skipped }, 'user deletion requested');
      return { userId: plan.userId, messages, skipped: plan.skipped };
    });
    return withDeadline(work, timeoutMs, 'the deletion request');
  }

  syncAudience(name: string, body: unknown): Promise<AudienceSyncOutcome> {
    const { writer, codec, topics, config, audiences, logger, timeoutMs } = this.options;
    const work = this.queue.run(async () => {
      const plan = planAudienceSync({ name, body, config: config.state(), members: audiences.members(name), now: Date.now(), newMessageId: randomUUID });
      if (plan.memberships.length > 0) {
        await writer.write([
          { topic: topics.ingest, messages: plan.messages.map((message) => this.ingestRecord(message)) },
          {
            topic: topics.audiences,
            messages: plan.memberships.map(({ key, value }) => ({ key, value: value ? codec.encode(topics.audiences, value) : null })),
          },
        ]);
        await audiences.reader.catchUpToEnd(timeoutMs);
      }
      const outcome: AudienceSyncOutcome = {
        audience: name,
        trait: plan.trait,
        firstSync: plan.firstSync,
        added: plan.added.length,
        removed: plan.removed.length,
        unchanged: plan.unchanged,
        messages: plan.messages.length,
      };
      logger.info(outcome, 'audience synced');
      return outcome;
    });
    return withDeadline(work, timeoutMs, 'the audience sync');
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Keyed like every ingest record: anonymousId, else userId. */
  private ingestRecord(message: IngestMessage) {
    return { key: message.anonymousId ?? message.userId, value: this.options.codec.encode(this.options.topics.ingest, message) };
  }
}
