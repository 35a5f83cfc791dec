/**
 * What a client driver reports after a run: the calls it made and the requests its
 * library sent. It is the contract between the drivers (the Go, Python and Java programs
 * print it as JSON on stdout, the Node and browser drivers return it) and `checkDelivery`.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type CallType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/** One call as the caller made it, in the Segment message model. */
export interface SentCall {
  type: CallType;
  /** The id the library gave the message. */
  messageId: string;
  userId?: string;
  anonymousId?: string;
  event?: string;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
  properties?: JsonObject;
  traits?: JsonObject;
  /** The context the caller passed; the library adds its own `library` entry. */
  context?: JsonObject;
  integrations?: JsonObject;
  /** A fixed historical timestamp the caller set, as the library put it on the wire. */
  timestamp?: string;
}

/** A call before the library has given it a message id. */
export type PlannedCall = Omit<SentCall, 'messageId'>;

/** One HTTP request the library made, and the answer where the library exposes it. */
export interface WireRequest {
  path: string;
  /** Lower-case names, credentials described rather than shown; null where the library hides them. */
  headers: Record<string, string> | null;
  /** The body as JSON (after gunzip), any write key in it replaced by a marker. */
  body: JsonObject;
  status?: number;
  response?: string;
  error?: string;
}

export interface Manifest {
  client: string;
  /** What the library reports about itself, expected as `context.library` on every message. */
  library: { name: string; version: string };
  calls: SentCall[];
  requests: WireRequest[];
  /** Failures the library reported (callbacks, error events, its log). */
  errors: string[];
  /**
   * A browser client's: every URL its page requested (page, bundle, ingest), for the suite to
   * check that all stay on loopback and none carries the write key.
   */
  requestedUrls?: string[];
}

const REDACTED_WRITE_KEY = '<write key>';

/**
 * The identity of a call within one run: every driver makes calls that differ in these
 * fields, so a message can be matched by content as well as by id.
 */
export function contentKey(message: Record<string, unknown>): string {
  const field = (name: string): string => {
    const value = message[name];
    return typeof value === 'string' ? value : '';
  };
  return ['type', 'userId', 'anonymousId', 'event', 'name', 'groupId', 'previousId'].map(field).join('\u241f');
}

/** Describes an Authorization header without its credentials. */
export function describeAuthorization(value: string, writeKey: string): string {
  const [scheme = '', credentials = ''] = value.split(' ', 2);
  if (scheme.toLowerCase() !== 'basic') return `${scheme} <credentials>`;
  return Buffer.from(credentials, 'base64').toString('utf8') === `${writeKey}:`
    ? 'Basic <write key>:<empty password>'
    : 'Basic <other credentials>';
}

function redactWriteKey(value: JsonObject): JsonObject {
  return 'writeKey' in value ? { ...value, writeKey: REDACTED_WRITE_KEY } : value;
}

/**
 * A JSON body as the suite keeps it: any `writeKey` field replaced by a marker, on the body
 * and on each message of its batch (analytics.js's batches carry it on every message too).
 */
export function redactBody(body: JsonObject): JsonObject {
  const redacted = redactWriteKey(body);
  const batch = body.batch;
  if (!Array.isArray(batch)) return redacted;
  return {
    ...redacted,
    batch: batch.map((message) => (typeof message === 'object' && message !== null && !Array.isArray(message) ? redactWriteKey(message) : message)),
  };
}

/** Reads a manifest a driver program printed, failing with the output when it is not one. */
export function parseManifest(output: string, program: string): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    throw new Error(`${program} did not print a JSON manifest; its output was:\n${output.slice(0, 2000)}`);
  }
  const manifest = parsed as Partial<Manifest> | null;
  if (
    !manifest ||
    typeof manifest.client !== 'string' ||
    typeof manifest.library?.name !== 'string' ||
    !Array.isArray(manifest.calls) ||
    !Array.isArray(manifest.requests) ||
    !Array.isArray(manifest.errors)
  ) {
    throw new Error(`${program} printed JSON that is not a manifest:\n${output.slice(0, 2000)}`);
  }
  return manifest as Manifest;
}
