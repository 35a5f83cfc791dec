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
