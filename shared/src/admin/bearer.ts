/**
 * The admin API's only credential: a bearer token (ADMIN_TOKEN). Both sides are hashed
 * before the constant-time comparison, so neither the token's length nor its prefix can
 * be learnt from response times.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AdminError } from './errors.js';

export type BearerCheck = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'wrong' };

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

export function checkBearer(authorization: string | undefined, token: string): BearerCheck {
  if (authorization === undefined || authorization.trim() === '') return { ok: false, reason: 'missing' };
  const presented = BEARER.exec(authorization)?.[1];
  if (presented === undefined) return { ok: false, reason: 'malformed' };
  return timingSafeEqual(digest(presented), digest(token)) ? { ok: true } : { ok: false, reason: 'wrong' };
}

const REALM = 'Bearer realm="tributary-admin"';

/** The 401 answer (and its WWW-Authenticate challenge) for a refused bearer check. */
export function bearerRefusal(reason: 'missing' | 'malformed' | 'wrong'): { error: AdminError; challenge: string } {
  switch (reason) {
    case 'missing':
      return { error: new AdminError(401, 'unauthorized', 'the admin API needs the admin token: send "Authorization: Bearer <ADMIN_TOKEN>"'), challenge: REALM };
    case 'malformed':
      return { error: new AdminError(401, 'unauthorized', 'the Authorization header must be "Bearer <ADMIN_TOKEN>"'), challenge: `${REALM}, error="invalid_request"` };
    case 'wrong':
      return { error: new AdminError(401, 'invalid_token', 'the admin token is not valid'), challenge: `${REALM}, error="invalid_token"` };
  }
}

/** The ADMIN_TOKEN setting, for every process that serves admin routes. */
export const adminTokenSetting = () =>
  z.string().regex(/^\S+$/, 'may not contain spaces (it is sent as "Authorization: Bearer <token>")').optional();
