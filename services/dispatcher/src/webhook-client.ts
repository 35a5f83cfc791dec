/**
 * The HTTP edge: POSTs one request to one webhook URL with undici and reports what
 * happened as a `UrlResult` for `classifyResult`. Each destination has its own undici
 * Agent (a keep-alive pool per origin): two destinations posting to one host must not
 * share connections, or a path that hangs would hold the pool and starve the other
 * destination's requests in its queue. Redirects are never followed (undici does not).
 *
 * SSRF guard (unless private networks are allowed): the connector resolves host names
 * through `guardedLookup`, so the address checked is the address connected to — a name
 * that resolves to a public address when checked and a private one when connecting
 * (DNS rebinding) cannot slip through. IP-literal hosts are checked before the request,
 * because Node connects to them without calling the lookup.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { isBlockedAddress } from './address-guard.js';
import { BLOCKED_ADDRESS_CODE, UNSUPPORTED_PROTOCOL_CODE, type UrlResult } from './classify.js';
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
  connectionsPerOrigin: number;
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

/** `dns.lookup` for the connector that refuses a name when any address it resolves to is blocked. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    const refused = addresses.find((entry) => isBlockedAddress(entry.address));
    if (refused) return callback(new BlockedAddressError(hostname, refused.address), '');
    const first = addresses[0];
    if (options.all) return callback(null, addresses);
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
    return callback(null, first.address, first.family);
  });
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

/**
 * Reads a response body to its end, keeping its first `keep` bytes. Past `limit` bytes the
 * body is abandoned (undici then closes the connection rather than reading on).
 */
async function readHead(body: AsyncIterable<Buffer> & { destroy(): unknown }, keep: number, limit: number): Promise<Buffer> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  for await (const chunk of body) {
    if (keptBytes < keep) {
      const part = chunk.length <= keep - keptBytes ? chunk : chunk.subarray(0, keep - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    total += chunk.length;
    if (total > limit) {
      body.destroy();
      break;
    }
  }
  // A copy: a slice would keep the whole chunk it came from alive with the delivery log record.
  return Buffer.concat(kept, keptBytes);
}

export class WebhookClient {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly options: WebhookClientOptions) {}

  private agentFor(destinationId: string): Agent {
    let agent = this.agents.get(destinationId);
    if (!agent) {
      agent = new Agent({
        connections: this.options.connectionsPerOrigin,
        pipelining: 1,
        keepAliveTimeout: KEEP_ALIVE_MS,
        keepAliveMaxTimeout: KEEP_ALIVE_MS,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        connect: {
          timeout: this.options.timeoutMs,
          ...(this.options.allowPrivateNetworks ? {} : { lookup: guardedLookup }),
        },
      });
      this.agents.set(destinationId, agent);
    }
    return agent;
  }

  /** Closes the pools of destinations that no longer exist. */
  async forgetExcept(destinationIds: ReadonlySet<string>): Promise<void> {
    const gone = [...this.agents].filter(([id]) => !destinationIds.has(id));
    for (const [id] of gone) this.agents.delete(id);
    await Promise.all(gone.map(([, agent]) => agent.close()));
  }

  async post(destinationId: string, url: string, request: WebhookRequest): Promise<UrlResult> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { kind: 'error', code: 'ERR_INVALID_URL', message: 'not an absolute URL' };
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return { kind: 'error', code: UNSUPPORTED_PROTOCOL_CODE, message: `${target.protocol} URLs are not supported; use http or https` };
    }
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!this.options.allowPrivateNetworks && isIP(host) && isBlockedAddress(host)) {
      const refused = new BlockedAddressError(host, host);
      return { kind: 'error', code: refused.code, message: refused.message };
    }

    // A timer cleared when the exchange ends, not AbortSignal.timeout: that timer always
    // runs out, then builds a DOMException (with its stack trace) and fires 'abort' for a
    // request long finished — about 20 µs of CPU per delivery (test/bench/ANALYSIS.md).
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    const { signal } = controller;
    try {
      const response = await this.agentFor(destinationId).request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal,
      });
      // Reading the body to the end is part of the exchange and frees the connection for reuse;
      // its first bytes are kept for the delivery log.
      const body = await readHead(response.body, RESPONSE_BODY_KEPT, RESPONSE_BODY_LIMIT);
      if (signal.aborted) return { kind: 'timeout', timeoutMs: this.options.timeoutMs };
      const result: UrlResult = { kind: 'response', status: response.statusCode };
      if (body.length > 0) result.body = body;
      const wait = retryAfterMs(response.headers['retry-after'], Date.now());
      if (wait !== undefined) result.retryAfterMs = wait;
      return result;
    } catch (error) {
      if (signal.aborted) return { kind: 'timeout', timeoutMs: this.options.timeoutMs };
      return { kind: 'error', code: errorCode(error), message: errorMessage(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }
}
