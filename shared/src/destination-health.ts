/**
 * The dispatchers' destination health, materialised: every dispatcher instance publishes its
 * view of each destination it handles (circuit state, backlog) to the compacted
 * `<ns>.destination-health.v1`, republishes it every few seconds and withdraws it (a
 * tombstone) when it stops or forgets an idle destination. A view not refreshed for
 * STALE_AFTER_MS comes from an instance that died without saying so and counts for nothing.
 * Read by the admin API (ingest) and by the router, which sends the deliveries of a destination
 * whose circuit is open or half-open, or that is congested, everywhere through the retry
 * lane (`parkReason`, pure), and defers itself those of a circuit open everywhere for a while
 * yet (`circuitOpenUntil`, pure).
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

  /** Until when every dispatcher has the destination's circuit open (see `circuitOpenUntil`), or undefined. */
  circuitOpenUntil(destinationId: string, now: number): number | undefined {
    const views = this.byDestination.get(destinationId);
    return views === undefined ? undefined : circuitOpenUntil(views.values(), now);
  }

  /** Why the router should send the destination's new deliveries through the retry lane (see below), or undefined. */
  parkReason(destinationId: string, now: number): ParkReason | undefined {
    const views = this.byDestination.get(destinationId);
    return views === undefined ? undefined : parkReason(views.values(), now);
  }
}

export type ParkReason = 'circuit_open' | 'congested';

/**
 * Why a new delivery would only wait in the first-attempt topic in front of everyone else's:
 *
 * - `circuit_open`: no fresh view has the circuit closed — every dispatcher would defer the
 *   delivery, or take it as one of its few half-open probes (which a delivery in the retry lane
 *   serves as well as one in the first).
 * - `congested`: every fresh view has the circuit tripped or the destination congested — its
 *   attempts stalled (some out, none finished for a while: a receiver that hangs, whose circuit
 *   opens only when the timeouts come back), or every request slot taken with deliveries
 *   waiting (a receiver slower than its traffic, whose circuit never opens). Its new deliveries
 *   would only queue in the first-attempt topic in front of everyone else's.
 *
 * Undefined — the delivery goes the usual way — when there is no fresh view, or when one fresh
 * view has the circuit closed and the destination keeping up. Parking is not deferring: the dispatcher
 * reads the retry lane at once and still decides there (attempt, probe or defer).
 */
export function parkReason(views: Iterable<DestinationHealth>, now: number): ParkReason | undefined {
  let fresh = 0;
  let allTripped = true;
  for (const view of views) {
    if (now - view.updatedAt > STALE_AFTER_MS) continue;
    const tripped = view.state === 'open' || view.state === 'half_open';
    // `?? null`: a view built without the field (decoding fills in its null default) is not congested.
    if (!tripped && (view.congestedSince ?? null) === null) return undefined;
    if (!tripped) allTripped = false;
    fresh++;
  }
  if (fresh === 0) return undefined;
  return allTripped ? 'circuit_open' : 'congested';
}

/** A circuit opening sooner than this is left to the dispatchers: its probes come from what they read. */
export const OPEN_AHEAD_MS = 1_000;

/**
 * When every fresh view has the destination's circuit open — not half-open — for at least
 * another OPEN_AHEAD_MS: the earliest time one of them lets probes through. Every dispatcher
 * would only defer a new delivery of it, so the router defers it itself, straight onto the retry
 * ladder, waiting until then at least (shared `deferral`). Undefined otherwise: no fresh view, a
 * view closed or half-open (it takes probes), or an opening about to end.
 */
export function circuitOpenUntil(views: Iterable<DestinationHealth>, now: number): number | undefined {
  let earliest: number | undefined;
  for (const view of views) {
    if (now - view.updatedAt > STALE_AFTER_MS) continue;
    if (view.state !== 'open' || view.openUntil === null || view.openUntil - now < OPEN_AHEAD_MS) return undefined;
    earliest = earliest === undefined ? view.openUntil : Math.min(earliest, view.openUntil);
  }
  return earliest;
}
