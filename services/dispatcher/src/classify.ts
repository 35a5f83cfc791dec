/**
 * Classification of webhook outcomes. Pure: the HTTP edge reports what happened to one
 * URL (`UrlResult`); `classifyResult` says whether that is a success, a failure worth
 * retrying or a fatal one; `classifyDelivery` combines the URLs of one destination.
 *
 * | outcome                                                   | class                       |
 * |-----------------------------------------------------------|-----------------------------|
 * | 2xx                                                       | success                     |
 * | 5xx, 408, 429                                             | retryable (http_status)     |
 * | 410 Gone (from every URL; else the other URLs' reason)     | fatal gone                  |
 * | other 4xx                                                 | fatal http_status           |
 * | 3xx (redirects are never followed)                        | fatal redirect              |
 * | no complete answer within WEBHOOK_TIMEOUT                 | retryable timeout           |
 * | refused, reset, hang-up, unreachable, connect timeout     | retryable connection        |
 * | DNS: ENOTFOUND, EAI_AGAIN, c-ares' ETIMEOUT, ESERVFAIL…   | retryable dns               |
 * | certificate or TLS handshake failure (no request is sent) | fatal tls                   |
 * | address refused by the SSRF guard                         | fatal blocked_address       |
 * | malformed URL or not http(s)                              | fatal invalid_url           |
 * | a request Node or undici refuses to build (bad header)    | fatal undeliverable         |
 *
 * ENOTFOUND is retryable on purpose: each attempt reads the URL from the current config,
 * so a destination whose host name was mistyped, or whose DNS record is not published
 * yet, recovers as soon as it is fixed — its pending deliveries go through on the next
 * retry instead of sitting in the dead-letter topic. The 4 h window bounds the cost.
 * Unknown transport errors are retryable for the same reason: the window bounds them.
 *
 * A `Retry-After` on a retryable answer (429, 503…) travels with the verdict: it sets the
 * delay before the next attempt and pauses the destination's circuit (breaker.ts).
 */
import type { DeadLetterReason } from '@tributary/schemas';

export type UrlResult =
  | { kind: 'response'; status: number; retryAfterMs?: number | undefined; body?: Buffer | undefined }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'error'; code: string | undefined; message: string };

export type RetryableKind = 'timeout' | 'connection' | 'dns' | 'http_status';
export type FatalReason = Extract<DeadLetterReason, 'http_status' | 'gone' | 'redirect' | 'tls' | 'blocked_address' | 'invalid_url' | 'undeliverable'>;

export type UrlVerdict =
  | { class: 'success'; status: number }
  | { class: 'retryable'; kind: RetryableKind; status: number | null; detail: string; retryAfterMs?: number | undefined }
  | { class: 'fatal'; reason: FatalReason; status: number | null; detail: string };

/** Error code our SSRF guard raises; classified as `blocked_address`. */
export const BLOCKED_ADDRESS_CODE = 'ERR_TRIBUTARY_BLOCKED_ADDRESS';
/** Error code for a webhook URL that is not http(s); classified as `invalid_url`. */
export const UNSUPPORTED_PROTOCOL_CODE = 'ERR_TRIBUTARY_UNSUPPORTED_PROTOCOL';

/** getaddrinfo's codes, and c-ares' (host-lookup.ts) for a name server that failed to answer. */
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA', 'ETIMEOUT', 'ESERVFAIL', 'EREFUSED', 'EBADRESP', 'EFORMERR', 'ENOTIMP', 'EBADNAME']);
const INVALID_URL_CODES = new Set(['ERR_INVALID_URL', UNSUPPORTED_PROTOCOL_CODE]);
/**
 * A request refused before anything is sent, the same way at every attempt: undici refuses
 * some headers outright (`Expect` as UND_ERR_NOT_SUPPORTED; `Keep-Alive`, `Upgrade`,
 * `Transfer-Encoding` as UND_ERR_INVALID_ARG). As "unknown, retryable" they made 4 hours of
 * retries with nothing sent.
 */
const UNDELIVERABLE_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE', 'ERR_INVALID_HTTP_TOKEN']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/**
 * A self-signed certificate: the spec's one TLS case ("an error is raised and no request is
 * sent"), fatal at once — it stays self-signed until someone changes the receiver.
 */
const SELF_SIGNED_CODES = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN']);
/**
 * Other certificate verification results and handshake failures Node reports as error codes.
 * No request is sent either, but they are retried within the window: a certificate that
 * lapsed for twenty minutes, a hostname briefly served by the wrong certificate, a handshake
 * cut by a load balancer being redeployed (EPROTO) heal without anyone replaying dead letters.
 */
const CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

function isTlsCode(code: string): boolean {
  return CERTIFICATE_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_');
}

function describeError(code: string | undefined, message: string): string {
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

export function classifyResult(result: UrlResult): UrlVerdict {
  switch (result.kind) {
    case 'response': {
      const { status } = result;
      if (status >= 200 && status < 300) return { class: 'success', status };
      const detail = `HTTP ${status}`;
      if (status >= 500 || status === 408 || status === 429) {
        const verdict: UrlVerdict = { class: 'retryable', kind: 'http_status', status, detail };
        if (result.retryAfterMs !== undefined) verdict.retryAfterMs = result.retryAfterMs;
        return verdict;
      }
      if (status === 410) return { class: 'fatal', reason: 'gone', status, detail: `${detail} (Gone)` };
      if (status >= 300 && status < 400) return { class: 'fatal', reason: 'redirect', status, detail: `${detail} (redirects are not followed)` };
      return { class: 'fatal', reason: 'http_status', status, detail };
    }
    case 'timeout':
      return { class: 'retryable', kind: 'timeout', status: null, detail: `timeout: no complete answer within ${result.timeoutMs} ms` };
    case 'error': {
      const code = result.code ?? '';
      const detail = describeError(result.code, result.message);
      if (code === BLOCKED_ADDRESS_CODE) return { class: 'fatal', reason: 'blocked_address', status: null, detail };
      if (INVALID_URL_CODES.has(code)) return { class: 'fatal', reason: 'invalid_url', status: null, detail };
      if (UNDELIVERABLE_CODES.has(code)) return { class: 'fatal', reason: 'undeliverable', status: null, detail };
      if (SELF_SIGNED_CODES.has(code)) return { class: 'fatal', reason: 'tls', status: null, detail: `TLS: ${detail}` };
      if (isTlsCode(code)) return { class: 'retryable', kind: 'connection', status: null, detail: `TLS: ${detail}` };
      if (DNS_CODES.has(code)) return { class: 'retryable', kind: 'dns', status: null, detail };
      if (TIMEOUT_CODES.has(code)) return { class: 'retryable', kind: 'timeout', status: null, detail };
      return { class: 'retryable', kind: 'connection', status: null, detail };
    }
  }
}

export interface TargetVerdict {
  /** Where the request went, as safe to log (see `urlLabel`). */
  target: string;
  verdict: UrlVerdict;
}

export type DeliveryVerdict =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs?: number | undefined }
  | { kind: 'dead'; reason: FatalReason; status: number | null; error: string };

function summary(results: TargetVerdict[]): string {
  const failures: string[] = [];
  for (const { target, verdict } of results) {
    if (verdict.class !== 'success') failures.push(`${target}: ${verdict.detail}`);
  }
  return failures.join('; ');
}

/**
 * One destination's URLs together: any 2xx delivers the message and nothing is retried;
 * otherwise any retryable failure retries the delivery (to all URLs again); otherwise it
 * is dead, with the reason of the first fatal failure. The error text names every failure.
 *
 * `gone` is kept for the case where every URL answered 410 (what the reason means, and what
 * DELIVERY_DISABLE_ON_GONE disables a destination for): a 410 beside a 404 or a TLS failure
 * takes the reason of the first of those instead.
 */
export function classifyDelivery(results: TargetVerdict[]): DeliveryVerdict {
  const verdicts = results.map(({ verdict }) => verdict);
  for (const verdict of verdicts) {
    if (verdict.class === 'success') return { kind: 'delivered', status: verdict.status };
  }
  const retryable = verdicts.filter((verdict) => verdict.class === 'retryable');
  if (retryable.length > 0) {
    // lastStatus: the first HTTP status among the retryable failures, if any answered.
    const status = retryable.find((verdict) => verdict.status !== null)?.status ?? null;
    const retry: DeliveryVerdict = { kind: 'retry', status, error: summary(results) };
    // Of several receivers asking for a pause, the longest wish is kept: none is asked sooner than it wanted.
    for (const verdict of retryable) {
      if (verdict.class === 'retryable' && verdict.retryAfterMs !== undefined) retry.retryAfterMs = Math.max(retry.retryAfterMs ?? 0, verdict.retryAfterMs);
    }
    return retry;
  }
  const everyGone = verdicts.every((verdict) => verdict.class === 'fatal' && verdict.reason === 'gone');
  for (const verdict of verdicts) {
    if (verdict.class === 'fatal' && (everyGone || verdict.reason !== 'gone')) return { kind: 'dead', reason: verdict.reason, status: verdict.status, error: summary(results) };
  }
  return { kind: 'dead', reason: 'invalid_url', status: null, error: 'the destination has no webhook URL' };
}

export type RequestOutcome = 'success' | 'http_error' | 'timeout' | 'connection_error' | 'tls_error' | 'refused';

/**
 * Metric label for one request: how far it got. `refused` covers requests never sent
 * (blocked address, invalid URL, unbuildable request); a TLS failure also sends nothing.
 */
export function requestOutcome(verdict: UrlVerdict): RequestOutcome {
  if (verdict.class === 'success') return 'success';
  if (verdict.status !== null) return 'http_error';
  if (verdict.class === 'retryable') return verdict.kind === 'timeout' ? 'timeout' : 'connection_error';
  return verdict.reason === 'tls' ? 'tls_error' : 'refused';
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx' | 'none';

/** Metric label for a status: `none` when no HTTP answer came. */
export function statusClass(status: number | null): StatusClass {
  if (status === null || status < 200 || status >= 600) return 'none';
  return `${Math.floor(status / 100)}xx` as StatusClass;
}

/**
 * A URL as safe to log or store in a dead letter: scheme, host and port only. Paths and
 * query strings often carry credentials (chat-hook tokens, `?key=`), like static headers.
 */
export function urlLabel(url: string, index: number): string {
  return `webhooks[${index}] ${originOf(url)}`;
}

const origins = new Map<string, string>();

/** Scheme, host and port: paths and query strings often carry credentials. Cached: a destination's URLs repeat (parsing one costs a third of a microsecond). */
export function originOf(url: string): string {
  let origin = origins.get(url);
  if (origin === undefined) {
    try {
      origin = new URL(url).origin;
    } catch {
      origin = '(invalid URL)';
    }
    if (origins.size >= 10_000) origins.clear();
    origins.set(url, origin);
  }
  return origin;
}
