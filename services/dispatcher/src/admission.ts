/**
 * What happens to a delivery as it is read, before it takes any room. Pure.
 *
 * - Its destination's circuit is open (or half-open with its probes taken): it is deferred
 *   to the retry ladder without a request — `circuit_open`.
 * - Its destination is hogging the lane: the lane's buffer is nearly full (fetching is about
 *   to wait), this destination holds at least `maxDestinationShare` of what the lane has read,
 *   and its oldest queued delivery has waited longer than `maxQueueWaitMs` — it is not keeping
 *   up, and keeping more of its deliveries would stop the lane for every other destination
 *   whose records sit behind them in the partitions. It is deferred as well, `backlog_full`.
 *   Not when the dispatcher itself is the bottleneck (its event loop busy: every destination
 *   is slow to settle then, and deferring would only add work) — then fetching waits, as it
 *   should for a pipeline at capacity — unless the destination is stalled: it has attempts
 *   out and none of them has finished for longer than `maxQueueWaitMs`. Those are waiting on
 *   the receiver, not on this process (a receiver that hangs until the timeout), and a busy
 *   dispatcher is exactly when its backlog must not stop the lane for everyone else.
 * - Otherwise it is queued, as a probe when the circuit is half-open.
 */
import type { BreakerAdmission } from './breaker.js';
import type { DeferReason } from '@tributary/shared';

export interface BacklogLimits {
  /** Share of a lane's buffered deliveries one destination may hold before it is judged. */
  maxDestinationShare: number;
  maxQueueWaitMs: number;
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
  oldestQueuedAt: number | undefined,
  limits: BacklogLimits,
  now: number,
  dispatcherBusy: boolean,
  /** While its attempts run: since when none of them has finished. */
  progressAt?: number,
): Admission {
  if (circuit === 'defer') return { kind: 'defer', reason: 'circuit_open' };
  if (circuit === 'probe') return { kind: 'queue', probe: true };
  const hogging = lane.fill >= NEARLY_FULL && lane.destinationShare >= limits.maxDestinationShare;
  const waitedLong = oldestQueuedAt !== undefined && now - oldestQueuedAt > limits.maxQueueWaitMs;
  const stalled = progressAt !== undefined && now - progressAt > limits.maxQueueWaitMs;
  if (hogging && waitedLong && (!dispatcherBusy || stalled)) return { kind: 'defer', reason: 'backlog_full' };
  return { kind: 'queue', probe: false };
}
