/**
 * How many retries wait on each tier partition: the partition's end offset minus the
 * offset its consumer group committed. Measured from the broker when /metrics is scraped,
 * because a paused partition is not fetched, so the consumer itself never learns how much
 * has piled up behind its head. One measurement serves every gauge of a scrape.
 */
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '@tributary/shared';

export interface PartitionLag {
  tier: string;
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

export interface TierGroup {
  tier: string;
  topic: string;
  groupId: string;
}

/** Answers within a scrape's time; a slower broker leaves the previous figures. */
const MEASURE_TIMEOUT_MS = 3000;
/** Gauges collected in one scrape share one measurement. */
const REUSE_MS = 1000;

export class PendingRecords {
  private admin: Admin | undefined;
  private last: { at: number; lags: Promise<PartitionLag[]> } | undefined;
  private known: PartitionLag[] = [];

  constructor(private readonly options: { kafka: Kafka; tiers: readonly TierGroup[]; logger: Logger }) {}

  async start(): Promise<void> {
    const admin = this.options.kafka.admin();
    await admin.connect();
    this.admin = admin;
  }

  async stop(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.disconnect();
  }

  measure(now = Date.now()): Promise<PartitionLag[]> {
    if (this.last && now - this.last.at < REUSE_MS) return this.last.lags;
    const lags = this.read().then(
      (lags) => (this.known = lags),
      (error: unknown) => {
        this.options.logger.warn({ err: error }, 'could not measure the pending retries; /metrics shows the previous figures');
        return this.known;
      },
    );
    this.last = { at: now, lags };
    return lags;
  }

  private async read(): Promise<PartitionLag[]> {
    const admin = this.admin;
    if (!admin) return [];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${MEASURE_TIMEOUT_MS} ms`)), MEASURE_TIMEOUT_MS);
    });
    const work = Promise.all(
      this.options.tiers.map(async ({ tier, topic, groupId }) => {
        const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
        return ends.map(({ partition, high, low }) => {
          const offset = committed?.partitions.find((entry) => entry.partition === partition)?.offset;
          // -1: nothing committed yet, so everything still on the partition waits.
          const from = offset === undefined || BigInt(offset) < 0n ? BigInt(low) : BigInt(offset);
          const lag = BigInt(high) > from ? Number(BigInt(high) - from) : 0;
          return { tier, group: groupId, topic, partition, lag };
        });
      }),
    );
    try {
      return (await Promise.race([work, timeout])).flat();
    } finally {
      clearTimeout(timer);
    }
  }
}
