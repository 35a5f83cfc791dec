/**
 * The dispatchers' destination health, materialised: every dispatcher instance publishes its
 * view of each destination it handles (circuit state, backlog) to the compacted
 * `<ns>.destination-health.v1`, republishes it every few seconds and withdraws it (a
 * tombstone) when it stops or forgets an idle destination. A view not refreshed for
 * STALE_AFTER_MS comes from an instance that died without saying so and counts for nothing.
 * Read by the admin API (ingest) and by the router, which sends the deliveries of a destination
 * whose circuit is open or half-open everywhere through the retry lane (`circuitTrippedEverywhere`,
 * pure).
 */
import type { Kafka } from 'kafkajs';
import type { DestinationHealth } from '@tributary/schemas';
import type { AvroCodec } from './avro.js';
import type { Logger } from './logger.js';
import { CompactedTopicReader } from './table.js';

/** Three of the dispatcher's publishing intervals (5 s). */
export const STALE_AFTER_MS = 15_000;

/** The health topic, materialised: views per destination. */
export class DestinationHealthTable {
  private readonly reader: CompactedTopicReader<DestinationHealth>;
  private readonly byDestination = new Map<string, Map<string, DestinationHealth>>();

  constructor(options: { kafka: Kafka; codec: AvroCodec; logger: Logger; topic: string; groupPrefix: string }) {
    this.reader = new CompactedTopicReader<DestinationHealth>({
      kafka: options.kafka,
      topic: options.topic,
      logger: options.logger,
      decode: (value) => options.codec.decode<DestinationHealth>('destination-health', value),
      groupPrefix: options.groupPrefix,
    });
    this.reader.onChange((key, value, previous) => {
      const record = value ?? previous;
      if (!record) return;
      let views = this.byDestination.get(record.destinationId);
      if (value) {
        if (!views) this.byDestination.set(record.destinationId, (views = new Map()));
        views.set(key, value);
      } else if (views) {
        views.delete(key);
        if (views.size === 0) this.byDestination.delete(record.destinationId);
      }
    });
  }

  start(): Promise<void> {
    return this.reader.start();
  }

  stop(): Promise<void> {
    return this.reader.stop();
  }

  views(destinationId: string): DestinationHealth[] {
    return [...(this.byDestination.get(destinationId)?.values() ?? [])];
  }

  /** Whether no dispatcher that handles the destination has its circuit closed (see below). */
  circuitTrippedEverywhere(destinationId: string, now: number): boolean {
    const views = this.byDestination.get(destinationId);
    return views !== undefined && circuitTrippedEverywhere(views.values(), now);
  }
}

/**
 * True when at least one fresh view exists and no fresh view has the circuit closed: every
 * dispatcher would defer a new delivery to the destination, or take it as one of its few
 * half-open probes (which a delivery in the retry lane serves as well as one in the first).
 * A closed circuit anywhere, or no fresh view at all, is false — the delivery then goes the
 * usual way.
 */
export function circuitTrippedEverywhere(views: Iterable<DestinationHealth>, now: number): boolean {
  let fresh = 0;
  for (const view of views) {
    if (now - view.updatedAt > STALE_AFTER_MS) continue;
    if (view.state !== 'open' && view.state !== 'half_open') return false;
    fresh++;
  }
  return fresh > 0;
}
