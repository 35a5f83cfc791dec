/**
 * Clock-skew correction, the rule of the hosted Segment platform: a device whose clock
 * is wrong stamps its events wrong by the same amount it stamps `sentAt` wrong, so
 *
 *     timestamp = receivedAt - (sentAt - originalTimestamp)
 *
 * keeps the interval between the event and the send, measured on the device's own clock,
 * and anchors it to the server's clock. Without `sentAt` nothing tells how wrong the
 * device's clock is, so the given timestamp is kept; without a timestamp the event is
 * taken to have happened when it was received.
 *
 * A `receivedAt - sentAt` smaller than SKEW_TOLERANCE_MS either way is network transit
 * and clock precision (analytics-go v2 sends whole seconds), not a wrong clock: the
 * timestamp is kept exactly, so historical imports land on the instant they name instead
 * of being shifted by a transit delay.
 */

export const SKEW_TOLERANCE_MS = 2_000;

export interface ClockReadings {
  /** The client's timestamp for the event, epoch ms, or null when it sent none. */
  originalTimestamp: number | null;
  /** The client's clock when it sent the request (message-level, else batch-level), or null. */
  sentAt: number | null;
  /** The server's clock at receipt. */
  receivedAt: number;
}

export function correctedTimestamp({ originalTimestamp, sentAt, receivedAt }: ClockReadings): number {
  if (originalTimestamp === null) return receivedAt;
  if (sentAt === null) return originalTimestamp;
  if (Math.abs(receivedAt - sentAt) < SKEW_TOLERANCE_MS) return originalTimestamp;
  return receivedAt - (sentAt - originalTimestamp);
}
