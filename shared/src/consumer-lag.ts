/**
 * Consumer lag as the broker sees it: each partition's end offset minus the offset the
 * consumer group committed, measured when /metrics is scraped. Measured from the broker
 * rather than from the consumer's own fetches because a consumer that is paused (a retry
 * tier holding its head until due) or stuck (the indexer waiting for its database) fetches
 * nothing, and so never learns how much piles up behind it. One measurement serves every
 * gauge of a scrape.
 *
 * Every consuming service reports `tributary_consumer_lag{group,topic,partition}` through
 * `createConsumerLagGauge`, so dashboards and alerts read one series for all of them.
 */
import type { Admin, Kafka } from 'kafkajs';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from './logger.js';

/** A consumer group reading a topic; callers may carry labels of their own (a retry tier). */
export interface GroupTopic {
  groupId: string;
  topic: string;
}

export type PartitionLag<G extends GroupTopic = GroupTopic> = G & { group: string; partition: number; lag: number };

/** Answers within a scrape's time; a slower broker leaves the previous figures. */
const MEASURE_TIMEOUT_MS = 3000;
/** Gauges collected in one scrape share one measurement. */
const REUSE_MS = 1000;

export class ConsumerLagProbe<G extends GroupTopic = GroupTopic> {
  private connecting: Promise<Admin> | undefined;
  private stopped = false;
  private last: { at: number; lags: Promise<PartitionLag<G>[]> } | undefined;
  private known: PartitionLag<G>[] = [];

  constructor(private readonly options: { kafka: Kafka; groups: readonly G[]; logger: Logger }) {}

  /**
   * Connects to the broker when it answers; when it does not, the first scrape that finds it
   * connects instead. A probe is never why a service stops: it failing at start-up (the broker
   * gone again right after the topics were prepared) used to exit the service.
   */
  async start(): Promise<void> {
    await this.connected().catch((error: unknown) => this.options.logger.warn({ err: error }, 'consumer lag unavailable until the broker answers'));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const connecting = this.connecting;
    this.connecting = undefined;
    const admin = await connecting?.catch(() => undefined);
    await admin?.disconnect();
  }

  measure(now = Date.now()): Promise<PartitionLag<G>[]> {
    if (this.last && now - this.last.at < REUSE_MS) return this.last.lags;
    const lags = this.read().then(
      (lags) => (this.known = lags),
      (error: unknown) => {
        this.options.logger.warn({ err: error }, 'could not measure consumer lag; /metrics shows the previous figures');
        return this.known;
      },
    );
    this.last = { at: now, lags };
    return lags;
  }

  private connected(): Promise<Admin> {
    this.connecting ??= (async () => {
      const admin = this.options.kafka.admin();
      try {
        await admin.connect();
        return admin;
      } catch (error) {
        this.connecting = undefined;
        await admin.disconnect().catch(() => undefined);
        throw error;
      }
    })();
    return this.connecting;
  }

  private async read(): Promise<PartitionLag<G>[]> {
    if (this.stopped) return [];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${MEASURE_TIMEOUT_MS} ms`)), MEASURE_TIMEOUT_MS);
    });
    const work = this.connected().then((admin) =>
      Promise.all(
        this.options.groups.map(async (group) => {
          const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(group.topic), admin.fetchOffsets({ groupId: group.groupId, topics: [group.topic] })]);
          return ends.map(({ partition, high, low }): PartitionLag<G> => {
            const offset = committed?.partitions.find((entry) => entry.partition === partition)?.offset;
            // -1: nothing committed yet, so everything still on the partition waits.
            const from = offset === undefined || BigInt(offset) < 0n ? BigInt(low) : BigInt(offset);
            const lag = BigInt(high) > from ? Number(BigInt(high) - from) : 0;
            return { ...group, group: group.groupId, partition, lag };
          });
        }),
      ),
    );
    try {
      return (await Promise.race([work, timeout])).flat();
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `tributary_consumer_lag{group,topic,partition}`, collected from `probe` at each scrape. */
export function createConsumerLagGauge(registry: Registry, probe: Pick<ConsumerLagProbe, 'measure'>, help?: string): Gauge<'group' | 'topic' | 'partition'> {
  return new Gauge({
    name: 'tributary_consumer_lag',
    help: help ?? 'Records behind the end of the partition, per consumer group, topic and partition.',
    labelNames: ['group', 'topic', 'partition'],
    registers: [registry],
    async collect() {
      const lags = await probe.measure();
      this.reset();
      for (const { group, topic, partition, lag } of lags) this.set({ group, topic, partition: String(partition) }, lag);
    },
  });
}
