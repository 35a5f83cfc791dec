/**
 * Who is calling (ingest over HTTP; @tributary/producer by write key too): the source whose write key came with the request, as HTTP basic auth
 * (write key as user name, empty password — what every server-side Segment library
 * sends) or as `writeKey` in the JSON body (what analytics.js sends, since a browser
 * request with an Authorization header would need a CORS preflight). Basic auth, when
 * sent, decides; a header of another scheme (an OAuth bearer token) leaves the decision to
 * the body's key. Answers never repeat the key.
 */
import type { Source } from '@tributary/schemas';
import type { ApiError } from './api-error.js';

export type HeaderCredentials =
  | { kind: 'none' }
  | { kind: 'writeKey'; writeKey: string }
  /** Basic auth that names no write key: refused, as basic auth takes precedence over the body. */
  | { kind: 'malformed'; problem: string }
  /**
   * Another scheme (`Bearer …`: analytics-node and analytics-python with OAuth, which still put
   * the write key in the body). Not ours to check: the body's `writeKey` authenticates the
   * request, and `problem` is the answer when there is none.
   */
  | { kind: 'otherScheme'; problem: string };

const HOW_TO =
  'send the write key as the HTTP basic auth user name with an empty password (curl -u WRITE_KEY:), or as "writeKey" in the JSON body';

const CHALLENGE = { 'www-authenticate': 'Basic realm="tributary", charset="UTF-8"' };

export function credentialsFromHeader(authorization: string | undefined): HeaderCredentials {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'none' };
  if (!/^\s*basic(\s|$)/i.test(authorization)) {
    return { kind: 'otherScheme', problem: `the Authorization header is not HTTP basic auth and the body has no "writeKey": ${HOW_TO}` };
  }
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(authorization);
  if (!match) return { kind: 'malformed', problem: `the Authorization header is not valid HTTP basic auth (the credentials are not base64): ${HOW_TO}` };
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  if (user === '') {
    const inPassword = colon >= 0 && decoded.length > colon + 1;
    return {
      kind: 'malformed',
      problem: inPassword
        ? 'the basic auth user name is empty: the write key goes in the user name, and the password stays empty'
        : `the basic auth user name is empty: ${HOW_TO}`,
    };
  }
  return { kind: 'writeKey', writeKey: user };
}

function unauthorized(code: string, error: string): ApiError {
  return { status: 401, code, error, headers: CHALLENGE };
}

export function missingCredentials(problem = `missing write key: ${HOW_TO}`): ApiError {
  return unauthorized('missing_write_key', problem);
}

export type Authentication = { ok: true; source: Source } | { ok: false; error: ApiError };

export function authenticate(writeKey: string, sourceByWriteKey: (writeKey: string) => Source | undefined): Authentication {
  const source = sourceByWriteKey(writeKey);
  if (source === undefined) return { ok: false, error: unauthorized('invalid_write_key', 'invalid write key: no source has this write key') };
  if (!source.enabled) {
    return { ok: false, error: unauthorized('invalid_write_key', `invalid write key: source "${source.id}" is disabled`) };
  }
  return { ok: true, source };
}
