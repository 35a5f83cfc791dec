/**
 * How deeply a JSON text nests objects and arrays, found by scanning its characters (no
 * parse, no recursion): a record whose free-form fields nest thousands deep is refused at
 * ingest and quarantined by the router before any recursive code meets it. Pure.
 */

/** Objects and arrays nested inside a message's free-form fields, at most. */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` nests deeper than `max` (stops scanning as soon as it does). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > max) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}
