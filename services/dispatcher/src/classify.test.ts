import { describe, expect, it } from 'vitest';
import {
  BLOCKED_ADDRESS_CODE,
  classifyDelivery,
  classifyResult,
  requestOutcome,
  statusClass,
  UNSUPPORTED_PROTOCOL_CODE,
  urlLabel,
  type TargetVerdict,
  type UrlResult,
} from './classify.js';

const response = (status: number): UrlResult => ({ kind: 'response', status });
const error = (code: string | undefined, message = 'boom'): UrlResult => ({ kind: 'error', code, message });

describe('classifyResult', () => {
  it.each([200, 201, 202, 204, 299])('%i is a success', (status) => {
    expect(classifyResult(response(status))).toEqual({ class: 'success', status });
  });

  it.each([500, 502, 503, 504, 599, 408, 429])('%i is retryable', (status) => {
    expect(classifyResult(response(status))).toMatchObject({ class: 'retryable', kind: 'http_status', status, detail: `HTTP ${status}` });
  });

  it.each([400, 401, 403, 404, 405, 409, 413, 422, 451])('%i is fatal (http_status)', (status) => {
    expect(classifyResult(response(status))).toMatchObject({ class: 'fatal', reason: 'http_status', status });
  });

  it('410 is fatal with its own reason, gone', () => {
    expect(classifyResult(response(410))).toEqual({ class: 'fatal', reason: 'gone', status: 410, detail: 'HTTP 410 (Gone)' });
  });

  it('a Retry-After on a retryable answer travels with the verdict', () => {
    expect(classifyResult({ kind: 'response', status: 429, retryAfterMs: 30_000 })).toEqual({
      class: 'retryable',
      kind: 'http_status',
      status: 429,
      detail: 'HTTP 429',
      retryAfterMs: 30_000,
    });
  });

  it.each([300, 301, 302, 303, 307, 308])('%i is fatal (redirect, not followed)', (status) => {
    expect(classifyResult(response(status))).toMatchObject({ class: 'fatal', reason: 'redirect', status });
  });

  it('a timeout is retryable and says how long was waited', () => {
    expect(classifyResult({ kind: 'timeout', timeoutMs: 5000 })).toEqual({
      class: 'retryable',
      kind: 'timeout',
      status: null,
      detail: 'timeout: no complete answer within 5000 ms',
    });
    expect(classifyResult(error('UND_ERR_HEADERS_TIMEOUT'))).toMatchObject({ class: 'retryable', kind: 'timeout' });
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', undefined])(
    'connection error %s is retryable',
    (code) => {
      expect(classifyResult(error(code, 'socket hang up'))).toMatchObject({ class: 'retryable', kind: 'connection', status: null });
    },
  );

  it.each(['ENOTFOUND', 'EAI_AGAIN', 'ETIMEOUT', 'ESERVFAIL'])('DNS failure %s is retryable (a fixed URL applies to pending retries)', (code) => {
    expect(classifyResult(error(code))).toMatchObject({ class: 'retryable', kind: 'dns' });
  });

  it.each(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN'])('a self-signed certificate (%s) is fatal (tls), as the spec has it', (code) => {
    const verdict = classifyResult(error(code, 'self-signed certificate'));
    expect(verdict).toMatchObject({ class: 'fatal', reason: 'tls', status: null });
    expect(verdict.class === 'fatal' && verdict.detail).toContain(code);
  });

  it.each(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO'])(
    'another TLS failure (%s) is retried within the window: a lapsed certificate or a cut handshake heals',
    (code) => {
      const verdict = classifyResult(error(code, 'certificate has expired'));
      expect(verdict).toMatchObject({ class: 'retryable', kind: 'connection', status: null });
      expect(verdict.class === 'retryable' && verdict.detail).toMatch(new RegExp(`^TLS: .*${code}`));
    },
  );

  it('the SSRF guard, bad URLs and unbuildable requests are fatal with their own reasons', () => {
    expect(classifyResult(error(BLOCKED_ADDRESS_CODE, 'refused'))).toMatchObject({ class: 'fatal', reason: 'blocked_address' });
    expect(classifyResult(error('ERR_INVALID_URL', 'Invalid URL'))).toMatchObject({ class: 'fatal', reason: 'invalid_url' });
    expect(classifyResult(error(UNSUPPORTED_PROTOCOL_CODE, 'ftp:'))).toMatchObject({ class: 'fatal', reason: 'invalid_url' });
    expect(classifyResult(error('UND_ERR_INVALID_ARG', 'invalid header'))).toMatchObject({ class: 'fatal', reason: 'undeliverable' });
  });

  it('a header undici will not send (a static Expect) is undeliverable, not retried for hours', () => {
    expect(classifyResult(error('UND_ERR_NOT_SUPPORTED', 'expect header not supported'))).toEqual({
      class: 'fatal',
      reason: 'undeliverable',
      status: null,
      detail: 'UND_ERR_NOT_SUPPORTED: expect header not supported',
    });
  });
});

const at = (target: string, result: UrlResult): TargetVerdict => ({ target, verdict: classifyResult(result) });

describe('classifyDelivery', () => {
  it('one 2xx among failures delivers the message', () => {
    const verdict = classifyDelivery([
      at('a', response(500)),
      at('b', { kind: 'timeout', timeoutMs: 5000 }),
      at('c', response(404)),
      at('d', error('ECONNREFUSED')),
      at('e', response(200)),
    ]);
    expect(verdict).toEqual({ kind: 'delivered', status: 200 });
  });

  it('no success but a retryable failure retries, naming every failure', () => {
    const verdict = classifyDelivery([at('a', response(404)), at('b', { kind: 'timeout', timeoutMs: 5000 }), at('c', response(503))]);
    expect(verdict).toEqual({
      kind: 'retry',
      status: 503,
      error: 'a: HTTP 404; b: timeout: no complete answer within 5000 ms; c: HTTP 503',
    });
  });

  it('keeps the longest Retry-After any URL asked for', () => {
    const verdict = classifyDelivery([
      at('a', { kind: 'response', status: 503, retryAfterMs: 5_000 }),
      at('b', { kind: 'response', status: 429, retryAfterMs: 60_000 }),
      at('c', error('ECONNREFUSED')),
    ]);
    expect(verdict).toMatchObject({ kind: 'retry', status: 503, retryAfterMs: 60_000 });
  });

  it('only fatal failures: dead with the reason and status of the first', () => {
    const verdict = classifyDelivery([at('a', response(301)), at('b', response(404))]);
    expect(verdict).toEqual({
      kind: 'dead',
      reason: 'redirect',
      status: 301,
      error: 'a: HTTP 301 (redirects are not followed); b: HTTP 404',
    });
  });

  it('is gone only when every URL answered 410; a 410 beside another fatal answer takes that one\'s reason', () => {
    expect(classifyDelivery([at('a', response(410)), at('b', response(410))])).toMatchObject({ kind: 'dead', reason: 'gone', status: 410 });
    expect(classifyDelivery([at('a', response(410)), at('b', response(404))])).toEqual({
      kind: 'dead',
      reason: 'http_status',
      status: 404,
      error: 'a: HTTP 410 (Gone); b: HTTP 404',
    });
    expect(classifyDelivery([at('a', response(410)), at('b', error('DEPTH_ZERO_SELF_SIGNED_CERT'))])).toMatchObject({ kind: 'dead', reason: 'tls', status: null });
  });

  it('five URLs all answering 500 retry once, as one delivery', () => {
    const verdict = classifyDelivery(['a', 'b', 'c', 'd', 'e'].map((target) => at(target, response(500))));
    expect(verdict).toMatchObject({ kind: 'retry', status: 500 });
  });

  it('a destination without URLs is dead', () => {
    expect(classifyDelivery([])).toMatchObject({ kind: 'dead', reason: 'invalid_url' });
  });
});

describe('requestOutcome', () => {
  it('says how far a request got', () => {
    expect(requestOutcome(classifyResult(response(200)))).toBe('success');
    expect(requestOutcome(classifyResult(response(503)))).toBe('http_error');
    expect(requestOutcome(classifyResult(response(404)))).toBe('http_error');
    expect(requestOutcome(classifyResult({ kind: 'timeout', timeoutMs: 1 }))).toBe('timeout');
    expect(requestOutcome(classifyResult(error('ECONNREFUSED')))).toBe('connection_error');
    expect(requestOutcome(classifyResult(error('ENOTFOUND')))).toBe('connection_error');
    expect(requestOutcome(classifyResult(error('DEPTH_ZERO_SELF_SIGNED_CERT')))).toBe('tls_error');
    expect(requestOutcome(classifyResult(error(BLOCKED_ADDRESS_CODE)))).toBe('refused');
    expect(requestOutcome(classifyResult(error('ERR_INVALID_URL')))).toBe('refused');
  });
});

describe('statusClass', () => {
  it('groups statuses and names the absence of one', () => {
    expect(statusClass(204)).toBe('2xx');
    expect(statusClass(302)).toBe('3xx');
    expect(statusClass(429)).toBe('4xx');
    expect(statusClass(503)).toBe('5xx');
    expect(statusClass(null)).toBe('none');
  });
});

describe('urlLabel', () => {
  it('keeps only the origin: paths and queries may carry credentials', () => {
    expect(urlLabel('https://hooks.example.com/services/T0/B0/s3cr3t?token=abc', 2)).toBe('webhooks[2] https://hooks.example.com');
    expect(urlLabel('http://user:pw@10.0.0.1:8080/x', 0)).toBe('webhooks[0] http://10.0.0.1:8080');
    expect(urlLabel('not a url', 1)).toBe('webhooks[1] (invalid URL)');
  });
});
