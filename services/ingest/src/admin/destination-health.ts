/**
 * Destination health for the admin API: every dispatcher instance publishes its view of each
 * destination it handles (circuit state, backlog) to the compacted
 * `<ns>.destination-health.v1`; this materialises that topic and sums the views up per
 * destination. `summarise` is pure.
 *
 * An instance republishes the destinations it tracks every few seconds and withdraws them
 * (a tombstone) when it stops or forgets an idle one, so a view not refreshed for
 * STALE_AFTER_MS comes from an instance that died without saying so: it is listed as stale
 * and counts for nothing. A destination with no fresh view has no delivery in flight
 * anywhere, and every circuit starts closed: its state is `closed`.
 */
import type { Kafka } from 'kafkajs';
import type { CircuitState, DestinationHealth } from '@tributary/schemas';
import { CompactedTopicReader, type AvroCodec, type Logger } from '@tributary/shared';

/** Three of the dispatcher's publishing intervals (5 s). */
export const STALE_AFTER_MS = 15_000;

const SEVERITY: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

export interface BacklogSummary {
  firstAttempts: number;
  retries: number;
  inFlight: number;
}

export interface InstanceHealth {
  instanceId: string;
  state: string;
  stateSince: string;
  openUntil: string | null;
  openings: number;
  consecutiveFailures: number;
  windowRequests: number;
  windowFailures: number;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
  backlog: BacklogSummary;
  attempts: number;
  deferrals: number;
  updatedAt: string;
  stale: boolean;
}

export interface HealthSummary {
  destinationId: string;
  /** The worst state any fresh instance reports: open > half_open > closed. */
  state: CircuitState;
  backlog: BacklogSummary;
  instances: InstanceHealth[];
  updatedAt: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function summarise(destinationId: string, views: readonly DestinationHealth[], now: number): HealthSummary {
  let state: CircuitState = 'closed';
  const backlog: BacklogSummary = { firstAttempts: 0, retries: 0, inFlight: 0 };
  let updatedAt: number | null = null;
  const instances = [...views]
    .sort((a, b) => a.instanceId.localeCompare(b.instanceId))
    .map((view): InstanceHealth => {
      const stale = now - view.updatedAt > STALE_AFTER_MS;
      const own = { firstAttempts: view.queuedFirst, retries: view.queuedRetries, inFlight: view.inFlight };
      if (!stale) {
        const viewState = (view.state in SEVERITY ? view.state : 'closed') as CircuitState;
        if (SEVERITY[viewState] > SEVERITY[state]) state = viewState;
        backlog.firstAttempts += own.firstAttempts;
        backlog.retries += own.retries;
        backlog.inFlight += own.inFlight;
      }
      updatedAt = Math.max(updatedAt ?? 0, view.updatedAt);
      return {
        instanceId: view.instanceId,
        state: view.state,
        stateSince: iso(view.stateSince)!,
        openUntil: iso(view.openUntil),
        openings: view.openings,
        consecutiveFailures: view.consecutiveFailures,
        windowRequests: view.windowRequests,
        windowFailures: view.windowFailures,
        lastSuccessAt: iso(view.lastSuccessAt),
        lastFailureAt: iso(view.lastFailureAt),
        lastError: view.lastError,
        backlog: own,
        attempts: view.attempts,
        deferrals: view.deferrals,
        updatedAt: iso(view.updatedAt)!,
        stale,
      };
    });
  return { destinationId, state, backlog, instances, updatedAt: iso(updatedAt) };
}

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
}
