/**
 * One pino logger per service. Secrets are censored by path, so a destination, a source,
 * request headers or a webhook entry can be logged whole without leaking shared secrets,
 * write keys, static header values (they may carry credentials) or Authorization headers.
 * Paths cover the shapes this code base logs, up to three levels deep; pino's redaction
 * is compiled once and costs nothing on lines that lack the paths.
 */
import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

const SECRET_KEYS = ['sharedSecret', 'standardWebhooksSecret', 'writeKey', 'password', 'authorization', 'Authorization', 'adminToken'];

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const key of SECRET_KEYS) {
    paths.push(key, `*.${key}`, `*.*.${key}`, `*.*.*.${key}`);
  }
  // Static webhook headers and request headers that may hold credentials.
  paths.push(
    'webhooks[*].headers',
    '*.webhooks[*].headers',
    '*.*.webhooks[*].headers',
    'headers.cookie',
    '*.headers.cookie',
    'headers["x-api-key"]',
    '*.headers["x-api-key"]',
  );
  return paths;
}

export const REDACTED = '[redacted]';

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
    redact: { paths: redactPaths(), censor: REDACTED },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    formatters: { level: (label) => ({ level: label }) },
  };
  // Asynchronous stdout: pino's default synchronous writes block the event loop whenever
  // the pipe's reader is slow (a busy log shipper, a terminal), and at delivery rates that
  // halves throughput. `flushLogger` writes out what is buffered before the process exits.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
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
