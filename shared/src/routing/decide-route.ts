/**
 * Which Webhooks destinations one message goes to, and why it does not go to the others.
 *
 * A message of an unknown source, or of a source with no Webhooks destination connected,
 * is filtered once as `no_destinations`; a disabled source's messages (ingest refuses
 * them, producers writing directly may not) once as `source_disabled`. Otherwise each
 * connected destination either receives it or is filtered: `destination_disabled` when
 * it is switched off, else `integrations_off` when the message's integrations object
 * turns Webhooks off. The integrations object is only consulted (and so only parsed) when
 * some enabled destination is connected.
 */
import type { Destination, Source } from '@tributary/schemas';

export const WEBHOOKS_TYPE = 'webhooks';

export type FilterReason = 'integrations_off' | 'destination_disabled' | 'no_destinations' | 'source_disabled';

export const FILTER_REASONS: readonly FilterReason[] = ['integrations_off', 'destination_disabled', 'no_destinations', 'source_disabled'];

export interface Filtered {
  reason: FilterReason;
  /** Set for the per-destination reasons. */
  destinationId?: string;
}

export interface RouteDecision {
  destinations: Destination[];
  filtered: Filtered[];
}

export function decideRoute(
  source: Source | undefined,
  connected: readonly Destination[],
  webhooksEnabled: () => boolean,
): RouteDecision {
  if (source === undefined) return { destinations: [], filtered: [{ reason: 'no_destinations' }] };
  if (!source.enabled) return { destinations: [], filtered: [{ reason: 'source_disabled' }] };
  const webhooks = connected.filter((destination) => destination.type === WEBHOOKS_TYPE);
  if (webhooks.length === 0) return { destinations: [], filtered: [{ reason: 'no_destinations' }] };

  const filtered: Filtered[] = [];
  const enabled: Destination[] = [];
  for (const destination of webhooks) {
    if (destination.enabled) enabled.push(destination);
    else filtered.push({ reason: 'destination_disabled', destinationId: destination.id });
  }
  if (enabled.length === 0 || webhooksEnabled()) return { destinations: enabled, filtered };
  for (const destination of enabled) filtered.push({ reason: 'integrations_off', destinationId: destination.id });
  return { destinations: [], filtered };
}
