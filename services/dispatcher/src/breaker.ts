/**
 * One destination's circuit breaker. Pure: time is passed in, the dispatcher asks before
 * each delivery and reports each attempt's outcome.
 *
 * - closed: deliveries are attempted. It opens after `consecutiveFailures` retryable
 *   failures in a row, or when at least `minRequests` attempts finished within the last
 *   `windowMs` and `failureRatio` of them failed — so a destination failing fast (refused
 *   connections, instant 503s) is caught as surely as one that hangs.
 * - open: no request is made; deliveries are deferred to the retry ladder (the window keeps
 *   running). After the cool-down it lets probes through. The cool-down starts at `openMs`
 *   and doubles with each opening in a row, up to `maxOpenMs`; a receiver's Retry-After
 *   (429/503) lengthens it to what was asked, within the same bound; a Retry-After from a
 *   closed circuit opens it at once for just that long (the receiver asked everyone to wait).
 * - half_open: up to `probes` real deliveries are attempted; the others are still deferred.
 *   A probe that succeeds closes the circuit; one that fails opens it again, for longer.
 *   A probe counted as started and never reported nor given back (`cancelProbe`) would hold
 *   it half-open, deferring everything, for good: when every probe is out and the last was
 *   let through more than `probeTimeoutMs` ago, they are taken for lost and let through again.
 *
 * "Failure" means a retryable outcome (timeout, connection error, 5xx, 408, 429). An answer
 * that ends the delivery without a retry (a 404, say) shows the destination is up: it counts
 * as a success here even though the delivery is dead-lettered.
 */
import type { CircuitState } from '@tributary/schemas';

export interface BreakerSettings {
  consecutiveFailures: number;
  failureRatio: number;
  minRequests: number;
  windowMs: number;
  openMs: number;
  maxOpenMs: number;
  probes: number;
  /**
   * How long a probe may take from its admission to its report — its wait for a slot and its
   * attempt — before it is taken for lost (see half_open above).
   */
  probeTimeoutMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  consecutiveFailures: 5,
  failureRatio: 0.5,
  minRequests: 20,
  windowMs: 10_000,
  openMs: 5_000,
  maxOpenMs: 300_000,
  probes: 3,
  probeTimeoutMs: 11_000,
};

/** What to do with the next delivery of this destination. */
export type BreakerAdmission = 'attempt' | 'probe' | 'defer';

export type AttemptResult =
  | { kind: 'success' }
  | { kind: 'failure'; error: string; retryAfterMs?: number | undefined };

export interface BreakerSnapshot {
  state: CircuitState;
  stateSince: number;
  openUntil: number | null;
  openings: number;
  consecutiveFailures: number;
  windowRequests: number;
  windowFailures: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastError: string | null;
}

/** Number of buckets the window is counted in; the window slides by one bucket at a time. */
const BUCKETS = 10;

export class CircuitBreaker {
  private state: CircuitState = 'closed';
  private stateSince: number;
  private openUntil = 0;
  private openings = 0;
  private consecutive = 0;
  private probesStarted = 0;
  /** When the last probe was let through. */
  private lastProbeAt = 0;
  private lastSuccessAt: number | null = null;
  private lastFailureAt: number | null = null;
  private lastError: string | null = null;
  private readonly bucketMs: number;
  private readonly requests = new Array<number>(BUCKETS).fill(0);
  private readonly failures = new Array<number>(BUCKETS).fill(0);
  /** Index (time / bucketMs) of the newest bucket written. */
  private newestBucket = 0;

  constructor(
    private readonly settings: BreakerSettings,
    now: number,
  ) {
    this.stateSince = now;
    this.bucketMs = Math.max(1, Math.ceil(settings.windowMs / BUCKETS));
  }

  get current(): CircuitState {
    return this.state;
  }

  /** Whether this breaker holds nothing worth remembering (closed, no recent failure). */
  isQuiet(now: number): boolean {
    this.slide(now);
    return this.state === 'closed' && this.consecutive === 0 && this.failures.every((count) => count === 0);
  }

  /** Asks whether the next delivery may be attempted; a `probe` answer counts as started. */
  admit(now: number): BreakerAdmission {
    if (this.state === 'open') {
      if (now < this.openUntil) return 'defer';
      this.transition('half_open', now);
      this.probesStarted = 0;
    }
    if (this.state === 'half_open') {
      // Every probe out and none heard of for longer than one takes: lost, not slow.
      if (this.probesStarted >= this.settings.probes && now - this.lastProbeAt > this.settings.probeTimeoutMs) this.probesStarted = 0;
      if (this.probesStarted >= this.settings.probes) return 'defer';
      this.probesStarted++;
      this.lastProbeAt = now;
      return 'probe';
    }
    return 'attempt';
  }

  /** While open: when it will let probes through. Null otherwise (closed, or half-open with its probes out). */
  probesAt(now: number): number | null {
    return this.state === 'open' && now < this.openUntil ? this.openUntil : null;
  }

  /** Reports the outcome of an attempt admitted as `attempt` or `probe` (`probe` tells which). */
  record(result: AttemptResult, probe: boolean, now: number): void {
    this.slide(now);
    const bucket = this.bucketIndex(now);
    this.requests[bucket]!++;
    if (result.kind === 'success') {
      this.lastSuccessAt = now;
      this.consecutive = 0;
      if (this.state === 'half_open' && probe) {
        this.openings = 0;
        // The failures that opened it are answered: counted on, one failure after the close
        // would re-open the circuit on the old ratio.
        this.requests.fill(0);
        this.failures.fill(0);
        this.transition('closed', now);
      }
      return;
    }
    this.failures[bucket]!++;
    this.consecutive++;
    this.lastFailureAt = now;
    this.lastError = result.error;
    if (this.state === 'half_open') {
      // Only a probe's failure re-opens: a straggler started before the circuit opened says
      // nothing about the destination now.
      if (probe) this.open(now, result.retryAfterMs);
      return;
    }
    if (this.state === 'open') {
      // Stragglers keep the circuit open no shorter than a Retry-After they bring.
      if (result.retryAfterMs !== undefined) this.openUntil = Math.max(this.openUntil, now + Math.min(result.retryAfterMs, this.settings.maxOpenMs));
      return;
    }
    if (this.shouldOpen()) this.open(now, result.retryAfterMs);
    else if (result.retryAfterMs !== undefined) this.pause(now, result.retryAfterMs);
  }

  /** Takes back a probe that was admitted but never attempted (its partition was revoked). */
  cancelProbe(): void {
    if (this.state === 'half_open' && this.probesStarted > 0) this.probesStarted--;
  }

  snapshot(now: number): BreakerSnapshot {
    this.slide(now);
    return {
      state: this.state,
      stateSince: this.stateSince,
      openUntil: this.state === 'open' ? this.openUntil : null,
      openings: this.openings,
      consecutiveFailures: this.consecutive,
      windowRequests: sum(this.requests),
      windowFailures: sum(this.failures),
      lastSuccessAt: this.lastSuccessAt,
      lastFailureAt: this.lastFailureAt,
      lastError: this.lastError,
    };
  }

  private shouldOpen(): boolean {
    if (this.consecutive >= this.settings.consecutiveFailures) return true;
    const requests = sum(this.requests);
    return requests >= this.settings.minRequests && sum(this.failures) >= this.settings.failureRatio * requests;
  }

  private open(now: number, retryAfterMs: number | undefined): void {
    const coolDown = Math.min(this.settings.openMs * 2 ** this.openings, this.settings.maxOpenMs);
    const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, this.settings.maxOpenMs);
    this.openings++;
    this.openUntil = now + Math.max(coolDown, asked);
    this.transition('open', now);
  }

  /**
   * The receiver asked for a pause (429/503 with Retry-After) before the failures added up
   * to an opening: honour it for everyone, for exactly as long as it asked (within the bound),
   * without lengthening later cool-downs.
   */
  private pause(now: number, retryAfterMs: number): void {
    this.openUntil = now + Math.min(retryAfterMs, this.settings.maxOpenMs);
    this.transition('open', now);
  }

  private transition(state: CircuitState, now: number): void {
    if (this.state === state) return;
    this.state = state;
    this.stateSince = now;
  }

  private bucketIndex(now: number): number {
    return Math.floor(now / this.bucketMs) % BUCKETS;
  }

  /** Clears the buckets that fell out of the window since the last call. */
  private slide(now: number): void {
    const current = Math.floor(now / this.bucketMs);
    const stale = Math.min(BUCKETS, current - this.newestBucket);
    for (let step = 1; step <= stale; step++) {
      const index = (this.newestBucket + step) % BUCKETS;
      this.requests[index] = 0;
      this.failures[index] = 0;
    }
    if (current > this.newestBucket) this.newestBucket = current;
  }
}

function sum(values: number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
