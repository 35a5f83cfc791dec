/**
 * Destination health for the admin API: every dispatcher instance publishes its view of each
 * destination it handles (circuit state, backlog) to the compacted
 * `<ns>.destination-health.v1`; shared's DestinationHealthTable materialises that topic and
 * `summarise` (pure) sums the views up per destination.
 *
 * An instance republishes the destinations it tracks every few seconds and withdraws them
 * (a tombstone) when it stops or forgets an idle one, so a view not refreshed for
 * STALE_AFTER_MS comes from an instance that died without saying so: it is listed as stale
 * and counts for nothing. A destination with no fresh view has no delivery in flight
 * anywhere, and every circuit starts closed: its state is `closed`.
 */
import type { CircuitState, DestinationHealth } from '@tributary/schemas';
import { STALE_AFTER_MS } from '@tributary/shared';

// The materialised topic lives in shared: the router reads it too.
export { DestinationHealthTable, STALE_AFTER_MS } from '@tributary/shared';

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
  /** Since when the destination has not kept up (attempts stalled, or every request slot taken with deliveries waiting); null otherwise. */
  congestedSince: string | null;
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
        congestedSince: iso(view.congestedSince),
        attempts: view.attempts,
        deferrals: view.deferrals,
        updatedAt: iso(view.updatedAt)!,
        stale,
      };
    });
  return { destinationId, state, backlog, instances, updatedAt: iso(updatedAt) };
}
