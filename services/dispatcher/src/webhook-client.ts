/**
 * The HTTP edge: POSTs one request to one webhook URL with undici and reports what
 * happened as a `UrlResult` for `classifyResult`. Each URL of each destination has its own
 * keep-alive pool of `connectionsPerUrl` (DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION) connections,
 * so every URL of every delivery in flight has a connection of its own:
 * - two destinations posting to one host must not share connections, or a path that hangs
 *   would hold the pool and starve the other destination's requests in its queue;
 * - nor must two URLs of one destination on one origin (`/a` and `/b` of one receiver is
 *   common): sharing one pool of that size, a delivery's requests waited for a connection
 *   inside their answer window (its timer starts at dispatch) and timed out on receivers that
 *   answered well within it, feeding the circuit breaker; and a hanging path's requests, still
 *   running after another URL answered, held the healthy path's connections.
 * Connections are opened as needed and close after KEEP_ALIVE_MS idle; a destination holds at
 * most `connectionsPerUrl` × its URLs (at most 5, config-model.ts).
 * Requests per URL are bounded by the same number: a delivery settles on its first 2xx and the
 * requests to its other URLs finish on their own, so a hanging or slow URL beside a healthy one
 * gathered requests — each holding its body — in undici's queue at the delivery rate, without
 * bound. A URL with `connectionsPerUrl` requests still running is answered `URL_BUSY` at once
 * (retryable; the delivery still succeeds by any other URL).
 * Redirects are never followed (undici does not).
 *
 * Host names are resolved by `HostLookup` (host-lookup.ts), not by the thread-pool lookup
 * Node would use, so a destination whose DNS hangs cannot hold up another's connections.
 *
 * SSRF guard (unless private networks are allowed): the connector resolves host names
 * through `connectLookup` with the guard on, so the address checked is the address connected
 * to — a name that resolves to a public address when checked and a private one when
 * connecting (DNS rebinding) cannot slip through. IP-literal hosts are checked before the
 * request, because Node connects to them without calling the lookup.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { isBlockedAddress } from './address-guard.js';
import { BLOCKED_ADDRESS_CODE, UNSUPPORTED_PROTOCOL_CODE, type UrlResult } from './classify.js';
import type { HostLookup } from './host-lookup.js';
import type { WebhookRequest } from './request.js';
import { retryAfterMs } from './retry-after.js';

/** Response bodies are read (so the connection can be reused) up to this size; a longer one closes the connection. */
const RESPONSE_BODY_LIMIT = 64 * 1024;
/** The first bytes of a response body kept for the delivery log. */
export const RESPONSE_BODY_KEPT = 1024;
/** Idle keep-alive connections close after this long. */
const KEEP_ALIVE_MS = 30_000;

export interface WebhookClientOptions {
  /** The whole exchange per URL: connect, TLS, request, response headers and body. */
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** Connections per URL of a destination: its in-flight limit, so none of its requests waits for one. */
  connectionsPerUrl: number;
  hosts: Pick<HostLookup, 'resolve'>;
}

class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS_CODE;
  constructor(host: string, address: string) {
    const subject = host === address ? address : `${host} resolves to ${address}, which`;
    super(
      `${subject} is a loopback, private, link-local or otherwise internal address; ` +
        'webhooks may not reach it unless DELIVERY_ALLOW_PRIVATE_NETWORKS=true',
    );
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The connector's lookup: `hosts`' addresses, narrowed to the family asked for; with `guarded`,
 * a name is refused when any address it resolves to is blocked.
 */
export function connectLookup(hosts: Pick<HostLookup, 'resolve'>, guarded: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    hosts.resolve(hostname).then(
      (addresses) => {
        const refused = guarded ? addresses.find((entry) => isBlockedAddress(entry.address)) : undefined;
        if (refused) return callback(new BlockedAddressError(hostname, refused.address), '');
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : undefined;
        const usable = family === undefined ? addresses : addresses.filter((entry) => entry.family === family);
        const first = usable[0];
        if (!first) return callback(Object.assign(new Error(`no IPv${family ?? ''} address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, usable.map(({ address, family: entryFamily }) => ({ address, family: entryFamily })));
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/** Where a URL points, parsed once: a destination's URLs repeat with every delivery. */
type Target = { kind: 'target'; origin: string; path: string } | { kind: 'refused'; result: UrlResult };

const TARGET_CACHE_SIZE = 10_000;

/** Which configured URLs a destination still has, for `forgetExcept`. */
export interface ConfiguredDestination {
  id: string;
  settings: { webhooks: ReadonlyArray<{ url: string }> };
}

/** Code of the answer given without a request when a URL has as many requests running as connections. */
export const URL_BUSY_CODE = 'URL_BUSY';

/** A URL's pool and the requests undici holds for it (sent, waiting for a connection, or being aborted). */
interface UrlPool {
  pool: Pool;
  inFlight: number;
}

export class WebhookClient {
  /** Destination id → URL → its pool. */
  private readonly pools = new Map<string, Map<string, UrlPool>>();
  private readonly targets = new Map<string, Target>();

  constructor(private readonly options: WebhookClientOptions) {}

  private poolFor(destinationId: string, url: string, origin: string): UrlPool {
    let byUrl = this.pools.get(destinationId);
    if (!byUrl) {
      byUrl = new Map();
      this.pools.set(destinationId, byUrl);
    }
    let entry = byUrl.get(url);
    if (!entry) {
      const pool = new Pool(origin, {
        connections: this.options.connectionsPerUrl,
        pipelining: 1,
        keepAliveTimeout: KEEP_ALIVE_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_MS,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        connect: {
          timeout: this.options.timeoutMs,
          lookup: connectLookup(this.options.hosts, !this.options.allowPrivateNetworks),
        },
      });
      entry = { pool, inFlight: 0 };
      byUrl.set(url, entry);
    }
    return entry;
  }

  /** Closes the pools of destinations that no longer exist, and of URLs they no longer have (after their requests finish). */
  async forgetExcept(destinations: ReadonlyArray<ConfiguredDestination>): Promise<void> {
    const configured = new Map(destinations.map((destination) => [destination.id, new Set(destination.settings.webhooks.map((entry) => entry.url))]));
    const gone: Pool[] = [];
    for (const [destinationId, byUrl] of this.pools) {
      const urls = configured.get(destinationId);
      for (const [url, { pool }] of byUrl) {
        if (urls?.has(url)) continue;
        byUrl.delete(url);
        gone.push(pool);
      }
      if (byUrl.size === 0) this.pools.delete(destinationId);
    }
    await Promise.all(gone.map((pool) => pool.close()));
  }

  /**
   * One exchange through undici's dispatch interface: the response arrives as callbacks, so no
   * stream, promise chain or AbortController is built per request — the dispatcher's profile
   * showed undici's request/stream machinery and AbortSignal creation as a fifth of its CPU.
   * A timer per request bounds the whole exchange (connect, TLS, request, answer, body); the
   * answer is its status line, whatever becomes of the body after it. The timer
   * starts before undici has a connection for the request; with a pool per URL sized to the
   * destination's in-flight limit none is waited for, so the window is the receiver's.
   */
  post(destinationId: string, url: string, request: WebhookRequest): Promise<UrlResult> {
    const target = this.target(url);
    if (target.kind === 'refused') return Promise.resolve(target.result);
    const { timeoutMs, connectionsPerUrl } = this.options;
    const urlPool = this.poolFor(destinationId, url, target.origin);
    if (urlPool.inFlight >= connectionsPerUrl) {
      return Promise.resolve({ kind: 'error', code: URL_BUSY_CODE, message: `${urlPool.inFlight} earlier requests to this URL still running` });
    }
    urlPool.inFlight++;
    return new Promise((resolve) => {
      let settled = false;
      // undici is done with the request (answered, failed or aborted): its body may go.
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        urlPool.inFlight--;
      };
      let controller: { abort(reason: Error): void } | undefined;
      let status = 0;
      let retryAfter: number | undefined;
      let kept: Buffer[] | undefined;
      let keptBytes = 0;
      let received = 0;
      const finish = (result: UrlResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const answered = (): UrlResult => {
        const result: UrlResult = { kind: 'response', status };
        // A copy: slices would keep whole chunks alive with the delivery-log record.
        if (kept) result.body = Buffer.concat(kept, keptBytes);
        if (retryAfter !== undefined) result.retryAfterMs = retryAfter;
        return result;
      };
      // Once the status line is in, the receiver has answered: a body that is slow or cut off
      // afterwards does not turn a 200 into a failure to retry (a duplicate for the receiver).
      const timer = setTimeout(() => {
        finish(status > 0 ? answered() : { kind: 'timeout', timeoutMs });
        controller?.abort(new Error('webhook timeout'));
      }, timeoutMs);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(requestController) {
          controller = requestController;
          if (settled) requestController.abort(new Error('webhook timeout'));
        },
        onResponseStart(_controller, statusCode, headers) {
          // An interim answer (102 Processing, 103 Early Hints) is not the answer: a receiver
          // that sends one and then hangs or drops the connection has not answered.
          if (statusCode < 200) return;
          status = statusCode;
          retryAfter = retryAfterMs(headers['retry-after'], Date.now());
        },
        onResponseData(responseController, chunk) {
          // Read to the end so the connection is reused; the first bytes go to the delivery log.
          if (keptBytes < RESPONSE_BODY_KEPT) {
            const part = chunk.length <= RESPONSE_BODY_KEPT - keptBytes ? chunk : chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes);
            (kept ??= []).push(part);
            keptBytes += part.length;
          }
          received += chunk.length;
          // A body past the limit is not read on: the answer is known, the connection dropped.
          if (received > RESPONSE_BODY_LIMIT) {
            finish(answered());
            responseController.abort(new Error('response body over the limit'));
          }
        },
        onResponseEnd() {
          release();
          finish(answered());
        },
        onResponseError(_controller, error) {
          release();
          finish(status > 0 ? answered() : { kind: 'error', code: errorCode(error), message: errorMessage(error) });
        },
      };
      try {
        urlPool.pool.dispatch({ origin: target.origin, path: target.path, method: request.method, headers: request.headers, body: request.body }, handler);
      } catch (error) {
        // Options undici refuses outright (a header value it cannot send, say).
        release();
        finish({ kind: 'error', code: errorCode(error), message: errorMessage(error) });
      }
    });
  }

  private target(url: string): Target {
    let target = this.targets.get(url);
    if (target) return target;
    target = this.parse(url);
    if (this.targets.size >= TARGET_CACHE_SIZE) this.targets.clear();
    this.targets.set(url, target);
    return target;
  }

  private parse(url: string): Target {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { kind: 'refused', result: { kind: 'error', code: 'ERR_INVALID_URL', message: 'not an absolute URL' } };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return { kind: 'refused', result: { kind: 'error', code: UNSUPPORTED_PROTOCOL_CODE, message: `${parsed.protocol} URLs are not supported; use http or https` } };
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!this.options.allowPrivateNetworks && isIP(host) && isBlockedAddress(host)) {
      const refused = new BlockedAddressError(host, host);
      return { kind: 'refused', result: { kind: 'error', code: refused.code, message: refused.message } };
    }
    return { kind: 'target', origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()].flatMap((byUrl) => [...byUrl.values()].map(({ pool }) => pool));
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }
}
