/**
 * The audiences topic materialised as members per audience: what the previous sync of
 * each audience left, which the next sync is compared with.
 */
import type { Kafka } from 'kafkajs';
import type { AudienceMembership } from '@tributary/schemas';
import { CompactedTopicReader, type AvroCodec, type Logger } from '@tributary/shared';

const NO_MEMBERS: ReadonlySet<string> = new Set();

export class AudienceTable {
  private readonly membersByAudience = new Map<string, Set<string>>();
  readonly reader: CompactedTopicReader<AudienceMembership>;

  constructor(options: { kafka: Kafka; codec: AvroCodec; logger: Logger; topic: string; groupPrefix: string }) {
    this.reader = new CompactedTopicReader<AudienceMembership>({
      kafka: options.kafka,
      topic: options.topic,
      logger: options.logger,
      decode: (value) => options.codec.decode<AudienceMembership>('audiences', value),
      groupPrefix: options.groupPrefix,
    });
    this.reader.onChange((_key, value, previous) => {
      const record = value ?? previous;
      if (record) this.set(record.audience, record.userId, value?.member ?? false);
    });
  }

  start(): Promise<void> {
    return this.reader.start();
  }

  stop(): Promise<void> {
    return this.reader.stop();
  }

  members(audience: string): ReadonlySet<string> {
    return this.membersByAudience.get(audience) ?? NO_MEMBERS;
  }

  private set(audience: string, userId: string, member: boolean): void {
    let members = this.membersByAudience.get(audience);
    if (member) {
      if (!members) this.membersByAudience.set(audience, (members = new Set()));
      members.add(userId);
    } else if (members) {
      members.delete(userId);
      if (members.size === 0) this.membersByAudience.delete(audience);
    }
  }
}
