/**
 * The longest wait a `Retry-After` is read as. Anything longer asks for more than any retry
 * window allows (a delivery then waits out its window and expires, as it would for this), and
 * an unbounded one is no number the delivery log can hold: 9,007,199,254,741 seconds, in
 * milliseconds, is past the largest Avro long a JavaScript number writes exactly, and its
 * attempt record failed to encode.
 */
export const RETRY_AFTER_CAP_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The `Retry-After` response header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
 * Pure. Answers in milliseconds from `now`, never negative and at most RETRY_AFTER_CAP_MS;
 * undefined when the header is absent or unreadable — then the ladder decides alone.
 */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) {
    // Any run of digits is a valid delay, however long (Number() of a long one is Infinity).
    return Math.min(Number(value) * 1000, RETRY_AFTER_CAP_MS);
  }
  // Only the IMF-fixdate form and its obsolete relatives carry a weekday and "GMT"; refuse
  // anything Date.parse would guess at (a bare "5m", say).
  if (!/GMT$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), RETRY_AFTER_CAP_MS);
}
