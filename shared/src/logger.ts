/**
 * One pino logger per service. Secrets are censored by key, so a destination, a source,
 * request headers or a webhook entry can be logged whole without leaking shared secrets,
 * write keys, static header values (they may carry credentials) or Authorization headers.
 *
 * Censoring is a walk of the logged object (`censorSecrets`), not pino's `redact`: its paths
 * needed wildcards to reach the shapes this code base logs (`*.*.*.writeKey`), and
 * fast-redact pays for a wildcard on every line, whether or not the line holds the key —
 * 110–140 µs a line for the paths this logger had, against 7 without them: with a line per
 * delivery at info, the dispatcher's CPU per delivery doubled. The walk copies only what it
 * censors; the caller's objects are never changed.
 */
import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

export const REDACTED = '[redacted]';

/** Keys whose values are censored wherever they appear (compared in lower case). */
const SECRET_KEYS = new Set(['sharedsecret', 'standardwebhookssecret', 'writekey', 'password', 'authorization', 'admintoken']);
/** Inside a `headers` object: values that carry credentials. */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'x-api-key']);
/** Deeper than this, objects are logged as they are: nothing here nests secrets further down. */
const MAX_DEPTH = 6;

/**
 * Whether JSON would write `value`'s own fields: objects, including class instances (avsc
 * decodes records into instances of its own classes) — but not one that says how it is
 * written (`toJSON`: a Buffer, a Date) nor a typed array, whose every index would be walked.
 */
function hasFields(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON !== 'function' && !ArrayBuffer.isView(value);
}

/**
 * `value` with every secret censored: the values of SECRET_KEYS at any depth, a webhook
 * entry's static `headers` whole (`webhooks[i].headers`), and credential headers inside any
 * `headers`. Returns `value` itself when there was nothing to censor; an object it censors
 * inside is copied as JSON would write it (its own enumerable fields). Pure.
 */
export function censorSecrets<T>(value: T, depth = 0, parentKey?: string, inWebhooks = false): T {
  if (depth >= MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const element: unknown = value[index];
      const censored = censorSecrets(element, depth + 1, undefined, parentKey === 'webhooks');
      if (censored !== element) (copy ??= value.slice())[index] = censored;
    }
    return (copy ?? value) as T;
  }
  if (value instanceof Error) {
    // Censored as pino writes an error (type, message, stack and its own fields), so that
    // what the `err` serializer would have shown is kept; untouched when nothing is secret.
    const serialized = pino.stdSerializers.err(value);
    const censored = censorSecrets(serialized, depth, parentKey);
    return (censored === serialized ? value : censored) as T;
  }
  if (!hasFields(value)) return value;
  const fields = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(fields)) {
    const field = fields[key];
    if (field === undefined || field === null) continue;
    const lower = key.toLowerCase();
    let censored: unknown;
    if (SECRET_KEYS.has(lower) || (parentKey === 'headers' && SECRET_HEADERS.has(lower)) || (inWebhooks && lower === 'headers')) censored = REDACTED;
    else if (typeof field === 'object') censored = censorSecrets(field, depth + 1, lower);
    else continue;
    if (censored !== field) (copy ??= { ...fields })[key] = censored;
  }
  return (copy ?? value) as T;
}

/** pino's error serializer, its output censored too (an error may carry the request or config it failed on). */
function censoredError(error: Error): ReturnType<typeof pino.stdSerializers.err> {
  // Not an Error: already written out by censorSecrets, which had something to censor in it.
  if (!(error instanceof Error)) return error;
  return censorSecrets(pino.stdSerializers.err(error));
}

/** The keys pino writes with `censoredError`: `createLogger`'s serializers, and what `censorLogFields` leaves to them. */
const SERIALIZED_ERROR_KEYS = ['err', 'error'] as const;

/**
 * A line's fields censored, except an Error under `err` or `error`: pino's serializer for those
 * keys (`censoredError`) writes and censors it afterwards, and walking it here as well wrote
 * each logged error twice. Pure; the caller's object is never changed.
 */
export function censorLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  const errorKeys = SERIALIZED_ERROR_KEYS.filter((key) => fields[key] instanceof Error);
  if (errorKeys.length === 0) return censorSecrets(fields);
  // Held out of the walk as undefined (which it passes over), so the fields keep their order.
  const others: Record<string, unknown> = { ...fields };
  for (const key of errorKeys) others[key] = undefined;
  const censored = censorSecrets(others);
  for (const key of errorKeys) censored[key] = fields[key];
  return censored;
}

export interface LoggerSettings {
  service: string;
  level?: string;
  /** For tests: write somewhere other than stdout. */
  destination?: DestinationStream;
}

export function createLogger({ service, level = 'info', destination }: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: Object.fromEntries(SERIALIZED_ERROR_KEYS.map((key) => [key, censoredError])),
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => censorLogFields(object),
      bindings: (bindings) => censorSecrets(bindings),
    },
  };
  // Asynchronous stdout: pino's default synchronous writes block the event loop whenever
  // the pipe's reader is slow (a busy log shipper, a terminal), and at delivery rates that
  // halves throughput. `flushLogger` writes out what is buffered before the process exits.
  const logger = pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
  // pino formats only the root's bindings (a child's `formatters.bindings` is reset), so a
  // child's are censored on the way in. Children inherit this method from the root.
  const createChild = logger.child;
  logger.child = function censoredChild(this: Logger, bindings, childOptions) {
    return createChild.call(this, censorSecrets(bindings), childOptions);
  } as Logger['child'];
  return logger;
}

/** Writes out buffered log lines synchronously; call right before `process.exit`. */
export function flushLogger(logger: Logger): void {
  try {
    logger.flush();
    const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { flushSync?: () => void } | undefined;
    stream?.flushSync?.();
  } catch {
    // Nothing left to do with a log line that cannot be written while exiting.
  }
}
