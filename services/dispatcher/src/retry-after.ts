/**
 * The `Retry-After` response header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
 * Pure. Answers in milliseconds from `now`, never negative; undefined when the header is
 * absent or unreadable — then the ladder decides alone.
 */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) {
    const seconds = Number(value);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  // Only the IMF-fixdate form and its obsolete relatives carry a weekday and "GMT"; refuse
  // anything Date.parse would guess at (a bare "5m", say).
  if (!/GMT$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
