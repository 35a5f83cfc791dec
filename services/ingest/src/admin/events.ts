/**
 * The admin requests that become messages on the ingest topic: user deletions and
 * audience syncs. A deletion is planned against the config and written in one transaction;
 * an audience sync is diffed against the audiences topic as it stands and written in
 * chunked transactions (audience/audience-sync.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { IngestMessage, TopicNames } from '@tributary/schemas';
import type { AvroCodec, ConfigView, Logger, TransactionalOutput } from '@tributary/shared';
import { isJsonObject } from '@tributary/shared/segment';
import { parseJsonSnapshot, planAudienceSync, type AudienceSync } from './audience-plan.js';
import { runAudienceSync, type AudienceSyncOutcome } from './audience/audience-sync.js';
import { lines, MemberLineError, parseMemberLine, type MemberLine } from './audience/member-lines.js';
import { invalid } from './errors.js';
import { withDeadline } from './deadline.js';
import { planDeletion } from './deletion-plan.js';
import { SerialQueue } from './serial.js';

export interface DeletionOutcome {
  userId: string;
  messages: Array<{ sourceId: string; messageId: string }>;
  skipped: Array<{ sourceId: string; reason: string }>;
}

export interface AdminEventsOptions {
  writer: TransactionalOutput;
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigView;
  logger: Logger;
  timeoutMs: number;
  groupPrefix: string;
}

export { type AudienceSyncOutcome };

export class AdminEvents {
  /** Transactions of this process's admin producer, one at a time. */
  private readonly queue = new SerialQueue();
  /** Audience syncs, one at a time: each diffs against the state the previous one left. */
  private readonly audienceQueue = new SerialQueue();

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

  /** A JSON snapshot (`{"sourceId", "userIds"}`, up to MAX_AUDIENCE_MEMBERS), answered within the write timeout. */
  syncAudience(name: string, body: unknown): Promise<AudienceSyncOutcome> {
    const sync = planAudienceSync(name, isJsonObject(body) && typeof body.sourceId === 'string' ? body.sourceId : undefined, this.options.config.state());
    const { userIds } = parseJsonSnapshot(body);
    const members = (async function* () {
      for (const userId of userIds) yield { userId, value: undefined };
    })();
    return withDeadline(this.runSync(sync, members), this.options.timeoutMs, 'the audience sync');
  }

  /**
   * An NDJSON snapshot streamed from the request, any size. No deadline: the time grows with
   * the audience; nothing is written before the whole snapshot was read and found valid.
   */
  syncAudienceStream(name: string, sourceId: string | undefined, body: AsyncIterable<Buffer | string>): Promise<AudienceSyncOutcome> {
    const sync = planAudienceSync(name, sourceId, this.options.config.state());
    const members = (async function* () {
      for await (const { text, line } of lines(body)) {
        const member = parseMemberLine(text, line);
        if (member) yield member;
      }
    })();
    return this.runSync(sync, members).catch((error: unknown) => {
      if (error instanceof MemberLineError) throw invalid('audience snapshot', [{ path: `line ${error.line}`, message: error.message.replace(/^line \d+: /, '') }]);
      if (typeof (error as NodeJS.ErrnoException).code === 'string' && (error as NodeJS.ErrnoException).code!.startsWith('Z_')) {
        throw invalid('audience snapshot', [{ path: '', message: 'the body is not valid gzip (Content-Encoding: gzip)' }]);
      }
      throw error;
    });
  }

  private runSync(sync: AudienceSync, members: AsyncIterable<MemberLine>): Promise<AudienceSyncOutcome> {
    const { writer, kafka, codec, topics, logger, timeoutMs, groupPrefix } = this.options;
    return this.audienceQueue.run(async () => {
      const outcome = await runAudienceSync(
        { kafka, codec, topics, logger, groupPrefix, scanTimeoutMs: Math.max(timeoutMs, 120_000), write: (batches) => this.queue.run(() => writer.write(batches)) },
        sync,
        members,
        Date.now,
        randomUUID,
      );
      logger.info(outcome, 'audience synced');
      return outcome;
    });
  }

  async idle(): Promise<void> {
    await this.audienceQueue.idle();
    await this.queue.idle();
  }

  /** Keyed like every ingest record: anonymousId, else userId. */
  private ingestRecord(message: IngestMessage) {
    return { key: message.anonymousId ?? message.userId, value: this.options.codec.encode(this.options.topics.ingest, message) };
  }
}
