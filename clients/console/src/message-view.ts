/**
 * What the message view derives from `GET /messages/{id}`: the attempts grouped per delivery
 * in time order, and whether the answer can still change (a delivery not settled yet, or a
 * message the indexer has not reached), which keeps the page refreshing.
 */
import type { Attempt, Delivery, MessageDetail } from './api';

export interface DeliveryTimeline {
  deliveryId: string;
  destinationId: string;
  delivery: Delivery | undefined;
  /** Oldest first. */
  attempts: Attempt[];
}

export function timelines(detail: MessageDetail): DeliveryTimeline[] {
  const byDelivery = new Map<string, DeliveryTimeline>();
  for (const delivery of detail.deliveries) {
    byDelivery.set(delivery.deliveryId, { deliveryId: delivery.deliveryId, destinationId: delivery.destinationId, delivery, attempts: [] });
  }
  for (const attempt of detail.attempts) {
    let timeline = byDelivery.get(attempt.deliveryId);
    if (!timeline) {
      timeline = { deliveryId: attempt.deliveryId, destinationId: attempt.destinationId, delivery: undefined, attempts: [] };
      byDelivery.set(attempt.deliveryId, timeline);
    }
    timeline.attempts.push(attempt);
  }
  for (const timeline of byDelivery.values()) {
    timeline.attempts.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || a.attempt - b.attempt);
  }
  return [...byDelivery.values()].sort((a, b) => a.destinationId.localeCompare(b.destinationId));
}

/** A delivery that may still get attempts: the view keeps refreshing while one exists. */
export function isSettled(detail: MessageDetail): boolean {
  return detail.deliveries.every((delivery) => delivery.state === 'delivered' || delivery.state === 'dead');
}

/** ms from when ingest received the message to the attempt's start: "+10.2 s" on the timeline. */
export function sinceReceived(attempt: Pick<Attempt, 'receivedAt' | 'startedAt'>): number | null {
  const received = Date.parse(attempt.receivedAt);
  const started = Date.parse(attempt.startedAt);
  return Number.isNaN(received) || Number.isNaN(started) ? null : started - received;
}

/**
 * What the page says when the log held more than the answer (`truncated`): the API keeps the
 * newest attempts, so the states shown are current but a long history starts part-way.
 */
export function truncationNote(detail: Pick<MessageDetail, 'truncated' | 'attempts'>): string | undefined {
  if (detail.truncated !== true) return undefined;
  return `Only the newest ${detail.attempts.length.toLocaleString('en-US')} attempts are shown: older ones were left out of the delivery log's answer.`;
}
