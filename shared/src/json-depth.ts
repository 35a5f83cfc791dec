/**
 * How deeply a JSON text nests objects and arrays, found by scanning its characters (no
 * parse, no recursion): a record whose free-form fields nest thousands deep is refused at
 * ingest and quarantined by the router before any recursive code meets it. Pure.
 *
 * Strings are crossed with `indexOf` rather than a character at a time: they are most of a
 * real body's characters (a batch of events with 8 KB properties is nearly all string), and
 * the per-character loop was the largest single cost of ingest's main thread under a flood
 * of large batches (15 % of it). A quote closes its string when an even number of
 * backslashes — none, or escaped ones — stands right before it.
 */

/** Objects and arrays nested inside a message's free-form fields, at most. */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` nests deeper than `max` (stops scanning as soon as it does). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x22) index = closingQuote(text, index);
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > max) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}

/** Where the string opened at `open` ends; the text's length when it never does (JSON.parse refuses that). */
function closingQuote(text: string, open: number): number {
  let quote = open;
  for (;;) {
    quote = text.indexOf('"', quote + 1);
    if (quote < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
}
