/**
 * Every destination's health as this process sees it: its circuit breaker and what it made
 * of the destination's deliveries. Pure: time is passed in; the dispatcher publishes snapshots to
 * `<ns>.destination-health.v1` and Prometheus.
 */
import type { CircuitState, DestinationHealth } from '@tributary/schemas';
import type { DeferReason } from './admission.js';
import { CircuitBreaker, type AttemptResult, type BreakerAdmission, type BreakerSettings } from './breaker.js';

export interface Backlog {
  first: number;
  retry: number;
  running: number;
  /** Since when the oldest queued delivery waits (either lane). */
  oldestQueuedAt?: number | undefined;
  /** While attempts run: since when none of them has finished (the first started after none ran, or the last to finish). */
  progressAt?: number | undefined;
}

export interface CongestionLimits {
  /** DELIVERY_MAX_QUEUE_WAIT. */
  maxWaitMs: number;
  /** DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION. */
  maxInFlight: number;
  /** How long a congested destination must keep up before it is published as caught up (`holdCongestion`). */
  holdMs: number;
}

/** A congested destination is published as caught up only after keeping up this long. */
export const CONGESTION_HOLD_MS = 5_000;

/**
 * Since when the destination has not been keeping up with its deliveries, or null:
 *
 * - stalled — attempts are out and none has finished for longer than `maxWaitMs` (a receiver
 *   that hangs until the timeout; its circuit opens only when the timeouts come back);
 * - saturated — every one of its request slots is taken and its oldest queued delivery has
 *   waited longer than `maxWaitMs` (a receiver slower than its traffic; its circuit never opens).
 *
 * Published, so that the router sends its new deliveries through the retry lane rather than in
 * front of everyone else's first attempts. A destination held back by this process being busy
 * has free slots, and is neither.
 */
export function congestedSince(backlog: Backlog, now: number, limits: CongestionLimits): number | null {
  const { running, progressAt, oldestQueuedAt } = backlog;
  if (running > 0 && progressAt !== undefined && now - progressAt > limits.maxWaitMs) return progressAt;
  if (running >= limits.maxInFlight && oldestQueuedAt !== undefined && now - oldestQueuedAt > limits.maxWaitMs) return oldestQueuedAt;
  return null;
}

/** What `holdCongestion` remembers of a destination between looks. */
export interface CongestionHold {
  /** Since when it is congested, as published; null when it is not. */
  since: number | null;
  /** While congested: since when it has kept up (not congested by `congestedSince`). */
  keptUpSince: number | null;
}

export const NOT_CONGESTED: CongestionHold = { since: null, keptUpSince: null };

/**
 * Congestion as published: congested as soon as `congestedSince` says so, caught up only once it
 * has said not for `holdMs` in a row. A receiver that takes over the wait per answer at low
 * traffic is stalled during each delivery and caught up between them: without the hold every
 * delivery made two health records, two transactions and two log lines, and the router switched
 * lanes twice. Held a few seconds too long costs nothing — a parked delivery of a destination
 * whose circuit is closed is attempted from the retry lane at once.
 */
export function holdCongestion(hold: CongestionHold, congestedNowSince: number | null, now: number, holdMs: number): CongestionHold {
  if (congestedNowSince !== null) return hold.since !== null && hold.keptUpSince === null ? hold : { since: hold.since ?? congestedNowSince, keptUpSince: null };
  if (hold.since === null) return hold;
  const keptUpSince = hold.keptUpSince ?? now;
  if (now - keptUpSince >= holdMs) return NOT_CONGESTED;
  return keptUpSince === hold.keptUpSince ? hold : { since: hold.since, keptUpSince };
}

interface Tracked {
  breaker: CircuitBreaker;
  congestion: CongestionHold;
  attempts: number;
  deferrals: number;
  deferredByReason: Record<DeferReason, number>;
  lastActivityAt: number;
}

export interface Transition {
  destinationId: string;
  from: CircuitState;
  to: CircuitState;
}

export class HealthBoard {
  private readonly tracked = new Map<string, Tracked>();

  constructor(
    private readonly settings: BreakerSettings,
    private readonly instanceId: string,
    /** When the destination is congested (see `congestedSince`). */
    private readonly congestion: CongestionLimits,
  ) {}

  /** Asks the destination's breaker about its next delivery; `transition` is set when that moved it (open → half-open). */
  admit(destinationId: string, now: number): { admission: BreakerAdmission; transition: Transition | undefined } {
    const entry = this.entry(destinationId, now);
    const from = entry.breaker.current;
    const admission = entry.breaker.admit(now);
    return { admission, transition: this.transitionOf(destinationId, from, entry.breaker.current) };
  }

  /** Reports a finished attempt (or probe); `transition` is set when it moved the circuit. */
  recordAttempt(destinationId: string, result: AttemptResult, probe: boolean, now: number): Transition | undefined {
    const entry = this.entry(destinationId, now);
    entry.attempts++;
    const from = entry.breaker.current;
    entry.breaker.record(result, probe, now);
    return this.transitionOf(destinationId, from, entry.breaker.current);
  }

  /** A probe was admitted but never made (its partition went to another process). */
  cancelProbe(destinationId: string): void {
    this.tracked.get(destinationId)?.breaker.cancelProbe();
  }

  noteDeferral(destinationId: string, reason: DeferReason, now: number): void {
    const entry = this.entry(destinationId, now);
    entry.deferrals++;
    entry.deferredByReason[reason]++;
  }

  /** When the destination's open circuit will let probes through; null when it is not open. */
  probesAt(destinationId: string, now: number): number | null {
    return this.tracked.get(destinationId)?.breaker.probesAt(now) ?? null;
  }

  state(destinationId: string): CircuitState {
    return this.tracked.get(destinationId)?.breaker.current ?? 'closed';
  }

  /** Deferrals by reason since the last call, per destination (for a periodic log line), reset on read. */
  takeDeferralCounts(): Array<{ destinationId: string; circuit_open: number; backlog_full: number }> {
    const counts: Array<{ destinationId: string; circuit_open: number; backlog_full: number }> = [];
    for (const [destinationId, entry] of this.tracked) {
      const { circuit_open, backlog_full } = entry.deferredByReason;
      if (circuit_open + backlog_full === 0) continue;
      counts.push({ destinationId, circuit_open, backlog_full });
      entry.deferredByReason = { circuit_open: 0, backlog_full: 0 };
    }
    return counts;
  }

  snapshot(destinationId: string, backlog: Backlog, now: number): DestinationHealth | undefined {
    const entry = this.tracked.get(destinationId);
    if (!entry) return undefined;
    const breaker = entry.breaker.snapshot(now);
    return {
      destinationId,
      instanceId: this.instanceId,
      ...breaker,
      queuedFirst: backlog.first,
      queuedRetries: backlog.retry,
      inFlight: backlog.running,
      congestedSince: this.congestionOf(entry, backlog, now),
      attempts: entry.attempts,
      deferrals: entry.deferrals,
      updatedAt: now,
    };
  }

  /** Whether the destination is congested now, as published (see `holdCongestion`). */
  congested(destinationId: string, backlog: Backlog, now: number): boolean {
    const entry = this.tracked.get(destinationId);
    return entry !== undefined && this.congestionOf(entry, backlog, now) !== null;
  }

  private congestionOf(entry: Tracked, backlog: Backlog, now: number): number | null {
    entry.congestion = holdCongestion(entry.congestion, congestedSince(backlog, now, this.congestion), now, this.congestion.holdMs);
    return entry.congestion.since;
  }

  has(destinationId: string): boolean {
    return this.tracked.has(destinationId);
  }

  destinations(): IterableIterator<string> {
    return this.tracked.keys();
  }

  /**
   * Forgets destinations that are closed, quiet and idle for `idleMs` (or no longer
   * configured): their published health should be withdrawn. Returns their ids.
   */
  sweep(now: number, idleMs: number, isBusy: (destinationId: string) => boolean, exists: (destinationId: string) => boolean): string[] {
    const forgotten: string[] = [];
    for (const [destinationId, entry] of this.tracked) {
      if (isBusy(destinationId)) continue;
      const idle = now - entry.lastActivityAt >= idleMs && entry.breaker.isQuiet(now);
      if (idle || !exists(destinationId)) {
        this.tracked.delete(destinationId);
        forgotten.push(destinationId);
      }
    }
    return forgotten;
  }

  private entry(destinationId: string, now: number): Tracked {
    let entry = this.tracked.get(destinationId);
    if (!entry) {
      entry = { breaker: new CircuitBreaker(this.settings, now), congestion: NOT_CONGESTED, attempts: 0, deferrals: 0, deferredByReason: { circuit_open: 0, backlog_full: 0 }, lastActivityAt: now };
      this.tracked.set(destinationId, entry);
    }
    entry.lastActivityAt = now;
    return entry;
  }

  private transitionOf(destinationId: string, from: CircuitState, to: CircuitState): Transition | undefined {
    return from === to ? undefined : { destinationId, from, to };
  }
}
