/**
 * What happens to a delivery as it is read, before it takes any room. Pure.
 *
 * - Its destination's circuit is open (or half-open with its probes taken): it is deferred
 *   to the retry ladder without a request — `circuit_open`.
 * - Its destination's backlog is full — a full queue (in deliveries or bytes) whose oldest
 *   delivery has waited longer than `maxQueueWaitMs`, while all of the destination's own
 *   request slots are busy — it is deferred as well, `backlog_full`: this destination is
 *   what holds its deliveries back, and keeping them would let it fill the buffer that every
 *   other destination's deliveries pass through. A burst that its slots drain quickly is
 *   not judged (its queue does not wait long); when the slots are not all busy the backlog
 *   is the dispatcher's own (all destinations share the global limit and the CPU): then
 *   nothing is deferred, and fetching waits instead, as it should for a pipeline that is
 *   simply at capacity. Nor is anything deferred for being slow while this process's event
 *   loop was blocked — answers may be waiting unread.
 * - Otherwise it is queued, as a probe when the circuit is half-open.
 */
import type { BreakerAdmission } from './breaker.js';

export interface BacklogLimits {
  maxQueuedPerDestination: number;
  maxQueuedBytesPerDestination: number;
  maxInFlightPerDestination: number;
  maxQueueWaitMs: number;
}

export interface DestinationBacklog {
  queued: number;
  queuedBytes: number;
  running: number;
  /** When its oldest queued delivery was queued. */
  oldestQueuedAt: number | undefined;
}

export type DeferReason = 'circuit_open' | 'backlog_full';

export type Admission = { kind: 'queue'; probe: boolean } | { kind: 'defer'; reason: DeferReason };

export function admit(
  circuit: BreakerAdmission,
  backlog: DestinationBacklog,
  bytes: number,
  limits: BacklogLimits,
  now: number,
  loopResponsive: boolean,
): Admission {
  if (circuit === 'defer') return { kind: 'defer', reason: 'circuit_open' };
  if (circuit === 'probe') return { kind: 'queue', probe: true };
  const queueFull = backlog.queued >= limits.maxQueuedPerDestination || backlog.queuedBytes + bytes > limits.maxQueuedBytesPerDestination;
  const waitedLong = backlog.oldestQueuedAt !== undefined && now - backlog.oldestQueuedAt > limits.maxQueueWaitMs;
  if (queueFull && waitedLong && backlog.running >= limits.maxInFlightPerDestination && loopResponsive) return { kind: 'defer', reason: 'backlog_full' };
  return { kind: 'queue', probe: false };
}
