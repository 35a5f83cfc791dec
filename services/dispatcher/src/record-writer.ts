/**
 * Writes retry records and dead letters, resolving each write only once Kafka has
 * acknowledged it (idempotent producer, acks=all) — the dispatcher commits a delivery's
 * offset only after that. Writes made while a send is in progress are gathered into the
 * next send, so hundreds of concurrent outcomes cost a few produce requests, not one each.
 */
import type { Message, Producer, TopicMessages } from 'kafkajs';
import type { Logger } from '@tributary/shared';

interface PendingWrite {
  topic: string;
  message: Message;
  resolve: () => void;
}

/** Upper bound of records per send, to keep produce requests well under the broker's size limit. */
const MAX_RECORDS_PER_SEND = 500;
const RETRY_BACKOFF_MS = 1000;

export class RecordWriter {
  private queue: PendingWrite[] = [];
  private sending = false;
  private closed = false;

  constructor(
    private readonly producer: Producer,
    private readonly logger: Logger,
  ) {}

  write(topic: string, key: string, value: Buffer): Promise<void> {
    if (this.closed) return Promise.reject(new Error('record writer closed'));
    return new Promise((resolve) => {
      this.queue.push({ topic, message: { key, value }, resolve });
      if (!this.sending) void this.drain();
    });
  }

  /** Stops retrying failed sends; writes not acknowledged by then never resolve. */
  close(): void {
    this.closed = true;
  }

  private async drain(): Promise<void> {
    this.sending = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const batch = this.queue.splice(0, MAX_RECORDS_PER_SEND);
        const byTopic = new Map<string, Message[]>();
        for (const write of batch) {
          const messages = byTopic.get(write.topic) ?? [];
          messages.push(write.message);
          byTopic.set(write.topic, messages);
        }
        const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
        try {
          await this.producer.sendBatch({ topicMessages, acks: -1 });
          for (const write of batch) write.resolve();
        } catch (error) {
          // The producer already retried; nothing may be dropped, so keep the records and try again.
          this.logger.error({ err: error, records: batch.length }, 'writing outcome records failed; retrying');
          this.queue.unshift(...batch);
          await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS));
        }
      }
    } finally {
      this.sending = false;
    }
  }
}
