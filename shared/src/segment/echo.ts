/**
 * What an answer repeats of the client's own input — a messageId, a type, a timestamp, a
 * path — cut to MAX_ECHO_CHARACTERS. A refusal names the value so that the client can find
 * what it sent, and the first 100 characters do that (every valid messageId fits whole); echoed
 * in full, a 30,000-character messageId repeated on each listed problem turned a 453 KB batch
 * into a 3 MB answer.
 */

/** Characters of a client's value an answer repeats; longer ones are cut, with a marker saying so. */
export const MAX_ECHO_CHARACTERS = 100;

/** `text` as an answer may repeat it: whole up to `max` characters, else its start and how much was left out. */
export function echoed(text: string, max = MAX_ECHO_CHARACTERS): string {
  if (text.length <= max) return text;
  // Never cut between the two halves of a surrogate pair: a lone half is not a character.
  const code = text.charCodeAt(max - 1);
  const cut = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, cut)}…(${text.length - cut} more characters)`;
}

/** A JSON value as an answer quotes it (`"abc"`, `42`, `{…}`), cut as `echoed` cuts text. */
export function echoedJson(value: unknown, max = MAX_ECHO_CHARACTERS): string {
  return echoed(JSON.stringify(value) ?? String(value), max);
}
