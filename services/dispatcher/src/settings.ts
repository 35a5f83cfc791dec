/**
 * The dispatcher's settings (beyond the common Kafka/registry/logging ones), validated by
 * `runService` through zod. Defaults follow the Webhooks spec: a 5 s answer window and a
 * retry period of at most 4 hours.
 */
import { isIP } from 'node:net';
import { envTypes, retryLadderEnv } from '@tributary/shared';
import type { BreakerSettings } from './breaker.js';

const MIB = 1024 * 1024;

export const dispatcherEnv = {
  HTTP_PORT: envTypes.port(9102),
  /** Whole exchange per URL: connect, TLS, request, response headers and body. */
  WEBHOOK_TIMEOUT: envTypes.duration('5s'),
  /** Lifts the SSRF guard (loopback, private, link-local, unique-local targets). */
  DELIVERY_ALLOW_PRIVATE_NETWORKS: envTypes.boolean(false),
  /**
   * Name servers for webhook hosts (`ip`, `ip:port`, `[ipv6]:port`, comma-separated) instead
   * of the system's resolv.conf; only they are asked (no /etc/hosts fallback). See host-lookup.ts.
   */
  DELIVERY_DNS_SERVERS: envTypes
    .list()
    .refine((servers) => servers.every(isNameServer), { message: 'each entry must be an IP address, optionally with :port (IPv6 as [address]:port)' })
    .optional(),
  ...retryLadderEnv,
  /** Consumer-group session timeout of both lanes: how long a crashed instance holds its partitions. */
  DELIVERY_SESSION_TIMEOUT: envTypes.duration('30s'),
  /** Deliveries being attempted at once, over all destinations, not counting stalled destinations' (fair-queue.ts): at most twice this in all. */
  DELIVERY_MAX_IN_FLIGHT: envTypes.positiveInt(512),
  /** Deliveries being attempted at once for one destination (also the connections per URL of a destination). */
  DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: envTypes.positiveInt(64),
  /**
   * A destination holding this share of a nearly full lane, whose oldest queued delivery has
   * waited longer than DELIVERY_MAX_QUEUE_WAIT, has its new deliveries deferred; so does one
   * with every slot taken, or stalled, whatever its share (see admission.ts).
   */
  DELIVERY_MAX_DESTINATION_SHARE: envTypes.ratio(0.5),
  DELIVERY_MAX_QUEUE_WAIT: envTypes.duration('1s'),
  /** Deliveries read from one lane and not yet settled; that lane's fetching waits beyond. */
  DELIVERY_MAX_BUFFERED: envTypes.positiveInt(2048),
  DELIVERY_MAX_BUFFERED_BYTES: envTypes.positiveInt(32 * MIB),
  /** Outcome records settled but not yet committed (held until the offsets before them settle); fetching waits beyond. */
  DELIVERY_MAX_STAGED_BYTES: envTypes.positiveInt(64 * MIB),
  /**
   * How often settled outcomes and offsets are committed (one transaction each time, when
   * there is anything). No delivery waits for it; a longer interval means fewer transactions
   * for the broker, and more deliveries sent again after a crash (those of the last interval).
   */
  DELIVERY_COMMIT_INTERVAL: envTypes.duration('250ms'),
  /** Largest record the dispatcher writes (the broker's or topic's max.message.bytes, less headroom). */
  KAFKA_MAX_RECORD_BYTES: envTypes.positiveInt(1_000_000),
  /** 410 Gone from every URL of a destination disables it (written to the config topic). */
  DELIVERY_DISABLE_ON_GONE: envTypes.boolean(false),
  /**
   * Test-only fault injection: a pause between sending a transaction's records and committing
   * it, so tests can kill the process with its transaction open. Never set it in production.
   */
  DELIVERY_TEST_COMMIT_DELAY: envTypes.duration('0ms'),
  /** Retryable failures in a row that open a destination's circuit. */
  CIRCUIT_FAILURES: envTypes.positiveInt(5),
  /** Share of failed attempts within CIRCUIT_WINDOW that opens the circuit, once CIRCUIT_MIN_REQUESTS were made. */
  CIRCUIT_FAILURE_RATIO: envTypes.ratio(0.5),
  CIRCUIT_MIN_REQUESTS: envTypes.positiveInt(20),
  CIRCUIT_WINDOW: envTypes.duration('10s'),
  /** First cool-down of an open circuit; doubles with each opening in a row, up to CIRCUIT_MAX_OPEN. */
  CIRCUIT_OPEN: envTypes.duration('5s'),
  CIRCUIT_MAX_OPEN: envTypes.duration('5m'),
  /** Real deliveries let through as probes when the cool-down ends. */
  CIRCUIT_PROBES: envTypes.positiveInt(3),
};


export function breakerFromSettings(settings: {
  WEBHOOK_TIMEOUT: number;
  DELIVERY_MAX_QUEUE_WAIT: number;
  CIRCUIT_FAILURES: number;
  CIRCUIT_FAILURE_RATIO: number;
  CIRCUIT_MIN_REQUESTS: number;
  CIRCUIT_WINDOW: number;
  CIRCUIT_OPEN: number;
  CIRCUIT_MAX_OPEN: number;
  CIRCUIT_PROBES: number;
}): BreakerSettings {
  return {
    consecutiveFailures: settings.CIRCUIT_FAILURES,
    failureRatio: settings.CIRCUIT_FAILURE_RATIO,
    minRequests: settings.CIRCUIT_MIN_REQUESTS,
    windowMs: settings.CIRCUIT_WINDOW,
    openMs: settings.CIRCUIT_OPEN,
    maxOpenMs: Math.max(settings.CIRCUIT_MAX_OPEN, settings.CIRCUIT_OPEN),
    probes: settings.CIRCUIT_PROBES,
    // A probe waits for a slot (about DELIVERY_MAX_QUEUE_WAIT when the dispatcher is
    // saturated) and then for one answer window; twice the window leaves a margin.
    probeTimeoutMs: 2 * settings.WEBHOOK_TIMEOUT + settings.DELIVERY_MAX_QUEUE_WAIT,
  };
}

/** What `dns.Resolver#setServers` accepts: an IP address, `ipv4:port` or `[ipv6]:port`. */
export function isNameServer(entry: string): boolean {
  if (isIP(entry) !== 0) return true;
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry);
  const withPort = bracketed ?? /^([^:]+):(\d{1,5})$/.exec(entry);
  if (!withPort) return false;
  const port = Number(withPort[2]);
  return isIP(withPort[1]!) === (bracketed ? 6 : 4) && port > 0 && port <= 65535;
}

/** c-ares' timeout of one try for webhook hosts: a quarter of the answer window, within 200 ms–2 s. */
export function dnsTryTimeoutMs(webhookTimeoutMs: number): number {
  return Math.min(2000, Math.max(200, Math.round(webhookTimeoutMs / 4)));
}
