/**
 * Where a new delivery goes: the first-attempt topic, the retry lane, or straight onto a retry
 * tier. Pure; the health it is judged by is the dispatchers' published views.
 *
 * - A destination whose circuit is open at every dispatcher for a while yet (`circuitOpenUntil`):
 *   every dispatcher would only read the delivery to defer it. The router defers it instead —
 *   the same `deferral` the dispatcher makes, waiting until the circuit lets probes through at
 *   least — so that a burst to a dead destination costs the dispatchers nothing until then.
 *   Nothing is attempted and no attempt is counted; the retry window starts, as with any deferral.
 * - Otherwise, a destination tripped or congested everywhere (`parkReason`): the retry lane, read
 *   apart from everyone's first attempts, where a dispatcher still decides (attempt, probe, defer).
 * - Otherwise, a message read from the overflow lane (what its source sent past its
 *   INGEST_SOURCE_RATE share): the retry lane too (`overflow`), so that a source's burst, backfill
 *   or amplifying fan-out waits behind itself at the dispatchers as it does here, and never in
 *   front of every other source's first attempts. A dispatcher reads the retry lane beside the
 *   first-attempt topic and attempts these at once; only their place in line differs.
 * - Otherwise the first-attempt topic.
 */
import { deferral, type ParkReason, type RetryLadder } from '@tributary/shared';
import type { Delivery, RetryRecord } from '@tributary/schemas';

/** Why a new delivery goes through the retry lane: its destination's health, or its source's burst. */
export type RetryLaneReason = ParkReason | 'overflow';

export type Placement = { lane: 'first' } | { lane: 'retry'; reason: RetryLaneReason } | { lane: 'tier'; record: RetryRecord };

export interface DestinationHealthLookup {
  parkReason(destinationId: string, now: number): ParkReason | undefined;
  circuitOpenUntil(destinationId: string, now: number): number | undefined;
}

/** Placed the usual way: the first-attempt topic. */
export const FIRST_LANE: Placement = { lane: 'first' };

/** Placed behind everyone's first attempts: read from the overflow lane. */
const OVERFLOW: Placement = { lane: 'retry', reason: 'overflow' };

export function placeDelivery(delivery: Delivery, health: DestinationHealthLookup | undefined, ladder: RetryLadder, now: number, fromOverflow: boolean): Placement {
  const reason = health?.parkReason(delivery.destinationId, now);
  if (reason === undefined) return fromOverflow ? OVERFLOW : FIRST_LANE;
  if (reason === 'circuit_open') {
    const probesAt = health?.circuitOpenUntil(delivery.destinationId, now);
    if (probesAt !== undefined) {
      const deferred = deferral(delivery, 'circuit_open', ladder, now, probesAt);
      // A window shorter than the first step: a dispatcher ends it, as it ends any.
      if (deferred.kind === 'retry') return { lane: 'tier', record: deferred.record };
    }
  }
  return { lane: 'retry', reason };
}
