/**
 * Which source's turn a request whose write key is in its body waits in, before the body is
 * parsed. Parsing, validating and encoding a 500 KB batch takes tens to hundreds of ms of the
 * main thread, and sources take turns at it (fair-turns.ts) — but a body's write key is known
 * only once parsed, so every such request (analytics.js sends them all so) shared one turn:
 * a few large batches of one browser source, or a flood of bodies with no valid key at all,
 * held up every other browser source's events for seconds.
 *
 * The hint is the first `"writeKey":"…"` in the raw bytes, found without parsing. It only
 * chooses the turn: the request is still authenticated by the parsed body's own top-level
 * writeKey. A body whose hint is not some source's key — or that has none — waits in the
 * turn of bodies without a known key, so what has no valid key holds up only its like.
 * A hint that names another source than the parsed key (a `writeKey` inside a message's
 * properties, before the top-level one) only puts that request in the other source's turn.
 * Pure.
 */

const FIELD = Buffer.from('"writeKey"', 'utf8');
/** Write keys are short; a hint past this is not one. */
const MAX_HINT_BYTES = 256;

const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** The string value of the first `"writeKey"` member in `body`, or undefined (none, escaped, or too long). */
export function writeKeyHint(body: Buffer): string | undefined {
  const at = body.indexOf(FIELD);
  if (at < 0) return undefined;
  let position = at + FIELD.length;
  while (isSpace(body[position])) position++;
  if (body[position] !== 0x3a /* : */) return undefined;
  position++;
  while (isSpace(body[position])) position++;
  if (body[position] !== 0x22 /* " */) return undefined;
  const start = position + 1;
  const end = body.indexOf(0x22, start);
  if (end < 0 || end === start || end - start > MAX_HINT_BYTES) return undefined;
  const hint = body.toString('utf8', start, end);
  // An escape may stand for a quote; such a key is left to the parse.
  return hint.includes('\\') ? undefined : hint;
}
