/**
 * Request signatures. Both are computed over the exact body bytes sent — the router
 * renders the body once as `JSON.stringify` output, so a receiver that re-serialises the
 * parsed body gets the same bytes and the same digest.
 */
import { createHmac } from 'node:crypto';

/** `X-Signature` of the Webhooks spec: hex HMAC-SHA1 keyed with the UTF-8 shared secret. */
export function xSignature(sharedSecret: string, body: Buffer): string {
  return createHmac('sha1', Buffer.from(sharedSecret, 'utf8')).update(body).digest('hex');
}

const STANDARD_WEBHOOKS_PREFIX = 'whsec_';

/**
 * `webhook-signature` of Standard Webhooks: `v1,` + base64 HMAC-SHA256 over
 * `<id>.<timestamp>.<body>`, keyed with the base64-decoded part of `whsec_<base64>`.
 */
export function standardWebhooksSignature(secret: string, webhookId: string, timestampSeconds: number, body: Buffer): string {
  const key = Buffer.from(secret.startsWith(STANDARD_WEBHOOKS_PREFIX) ? secret.slice(STANDARD_WEBHOOKS_PREFIX.length) : secret, 'base64');
  const digest = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.`, 'utf8').update(body).digest('base64');
  return `v1,${digest}`;
}
