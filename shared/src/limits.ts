/**
 * Limits on what a message may carry, shared by ingest (which refuses a request that passes
 * them, with a 400 naming the limit) and the router (which quarantines a record that passes
 * them — a producer writing to the ingest topic directly bypasses ingest).
 */

/** Characters of a messageId: Segment's API keeps message ids under 100 characters. */
export const MAX_MESSAGE_ID_LENGTH = 100;
/** Characters of userId, anonymousId, groupId and previousId. */
export const MAX_ID_LENGTH = 512;

/** The largest magnitude, in epoch milliseconds, a JS Date holds; `toISOString()` throws past it. */
export const MAX_DATE_MS = 8.64e15;

/** Headroom kept under KAFKA_MAX_RECORD_BYTES for a record's framing (key, headers, batch overhead). */
export const RECORD_FRAMING_BYTES = 512;

/** Whether `value` is a time a Date holds, in whole epoch milliseconds. */
export function isDateMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && Math.abs(value) <= MAX_DATE_MS;
}

/** Why `value` is not a time a Date holds (epoch ms), or undefined when it is one. */
export function timeProblem(field: string, value: number | null, required = true): string | undefined {
  if (value === null) return required ? `${field} is missing` : undefined;
  return isDateMs(value) ? undefined : `${field} is not a valid time: ${value}`;
}

/**
 * Checked where a delivery or retry record is read (dispatcher, retry-scheduler): Avro lets a
 * long reach 2^53, a date ends at MAX_DATE_MS, and a time past it made `toISOString` throw in
 * the middle of a batch — the same record failing at every fetch, its partition stopped for
 * good. Such a record is quarantined (`invalid_timestamp`).
 */
export function deliveryTimesProblem(delivery: { receivedAt: number; routedAt: number; firstAttemptAt: number | null }): string | undefined {
  return timeProblem('receivedAt', delivery.receivedAt) ?? timeProblem('routedAt', delivery.routedAt) ?? timeProblem('firstAttemptAt', delivery.firstAttemptAt, false);
}

/** `deliveryTimesProblem` of a retry record's delivery, and its `dueAt`. */
export function retryTimesProblem(record: { dueAt: number; delivery: { receivedAt: number; routedAt: number; firstAttemptAt: number | null } }): string | undefined {
  return timeProblem('dueAt', record.dueAt) ?? deliveryTimesProblem(record.delivery);
}
