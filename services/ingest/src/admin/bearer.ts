/**
 * The admin API's only credential: a bearer token (ADMIN_TOKEN). Both sides are hashed
 * before the constant-time comparison, so neither the token's length nor its prefix can
 * be learnt from response times.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type BearerCheck = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'wrong' };

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

export function checkBearer(authorization: string | undefined, token: string): BearerCheck {
  if (authorization === undefined || authorization.trim() === '') return { ok: false, reason: 'missing' };
  const presented = BEARER.exec(authorization)?.[1];
  if (presented === undefined) return { ok: false, reason: 'malformed' };
  return timingSafeEqual(digest(presented), digest(token)) ? { ok: true } : { ok: false, reason: 'wrong' };
}
