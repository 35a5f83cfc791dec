/**
 * `new Date(ms).toISOString()`, with the text up to the second cached: every webhook body
 * carries two to four times, most of a chunk's within a few seconds of each other, and
 * formatting them through Date was 4 % of the router's CPU in the profile at 1,400 events/s.
 * Pure apart from its cache; the same text as toISOString for every valid time (±8.64e15 ms).
 */

const SLOTS = 64;
const slotSecond = new Float64Array(SLOTS).fill(Number.NaN);
const slotPrefix: string[] = new Array<string>(SLOTS).fill('');

export function isoTime(ms: number): string {
  if (!Number.isInteger(ms)) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  const slot = ((second % SLOTS) + SLOTS) % SLOTS;
  let prefix = slotPrefix[slot]!;
  if (slotSecond[slot] !== second) {
    // "2026-11-26T09:14:18." — toISOString always ends in ".sssZ".
    prefix = new Date(second * 1000).toISOString().slice(0, -4);
    slotPrefix[slot] = prefix;
    slotSecond[slot] = second;
  }
  const millis = ms - second * 1000;
  return `${prefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
