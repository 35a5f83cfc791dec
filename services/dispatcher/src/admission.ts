/**
 * What happens to a delivery as it is read, before it takes any room. Pure.
 *
 * - Its destination's circuit is open (or half-open with its probes taken): it is deferred
 *   to the retry ladder without a request — `circuit_open`.
 * - Its destination is holding up a lane whose buffer is nearly full (fetching is about to
 *   wait), and keeping more of its deliveries would stop the lane for every other destination
 *   whose records sit behind them in the partitions. It is deferred as well, `backlog_full`:
 *   - when it is stalled — attempts out, none finished for longer than `maxQueueWaitMs`: a
 *     receiver hanging until the timeout. Its queue cannot move before the receiver answers,
 *     however fresh the delivery and however small its share; always, even when this process
 *     is busy, since it is waiting on the receiver, not on this process. Without this, eight
 *     hanging destinations holding an eighth of the lane each stopped it, none of them a hog,
 *     until their timeouts opened their circuits;
 *   - when it is not keeping up (its oldest queued delivery has waited longer than
 *     `maxQueueWaitMs`) and either holds at least `maxDestinationShare` of what the lane has
 *     read (one hog) or has every one of its `maxInFlightPerDestination` slots taken (a
 *     receiver slower than its traffic) — but not when the dispatcher itself is the bottleneck
 *     (its event loop busy: every destination is slow to settle then, and deferring would only
 *     add work): then fetching waits, as it should for a pipeline at capacity.
 * - Otherwise it is queued, as a probe when the circuit is half-open.
 */
import type { BreakerAdmission } from './breaker.js';
import type { DeferReason } from '@tributary/shared';

export interface BacklogLimits {
  /** Share of a lane's buffered deliveries one destination may hold before it is judged. */
  maxDestinationShare: number;
  maxQueueWaitMs: number;
  maxInFlightPerDestination: number;
}

/** What the fair queue holds of the destination (fair-queue.ts `backlog`). */
export interface DestinationBacklog {
  /** Since when its oldest queued delivery waits. */
  oldestQueuedAt: number | undefined;
  /** While its attempts run: since when none of them has finished. */
  progressAt: number | undefined;
  running: number;
}

/** How full a lane's buffer is (0–1, the larger of records and bytes) and the destination's share of it. */
export interface LanePressure {
  fill: number;
  destinationShare: number;
}

export type { DeferReason };

export type Admission = { kind: 'queue'; probe: boolean } | { kind: 'defer'; reason: DeferReason };

/** A lane at least this full is about to stop reading. */
export const NEARLY_FULL = 0.9;

export function admit(
  circuit: BreakerAdmission,
  lane: LanePressure,
  backlog: DestinationBacklog,
  limits: BacklogLimits,
  now: number,
  dispatcherBusy: boolean,
): Admission {
  if (circuit === 'defer') return { kind: 'defer', reason: 'circuit_open' };
  if (circuit === 'probe') return { kind: 'queue', probe: true };
  const { oldestQueuedAt, progressAt, running } = backlog;
  if (lane.fill < NEARLY_FULL) return { kind: 'queue', probe: false };
  // Its queue cannot move before its receiver answers, however fresh the delivery.
  if (progressAt !== undefined && now - progressAt > limits.maxQueueWaitMs) return { kind: 'defer', reason: 'backlog_full' };
  const waitedLong = oldestQueuedAt !== undefined && now - oldestQueuedAt > limits.maxQueueWaitMs;
  const holdingUp = lane.destinationShare >= limits.maxDestinationShare || running >= limits.maxInFlightPerDestination;
  if (waitedLong && holdingUp && !dispatcherBusy) return { kind: 'defer', reason: 'backlog_full' };
  return { kind: 'queue', probe: false };
}
