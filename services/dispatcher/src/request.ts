/**
 * What is sent to one webhook URL: method, headers and body. Pure; the HTTP edge sends it.
 *
 * Header order of precedence: the entry's static headers first, then the headers the
 * dispatcher owns, which always win. The config model already refuses static headers with
 * reserved names and hop-by-hop ones (which undici refuses: a static `Expect` failed every
 * request); they are dropped here as well because config can also be written to the config
 * topic directly, bypassing that validation.
 */
import { HOP_BY_HOP_HEADERS, RESERVED_HEADERS } from '@tributary/shared';
import type { Delivery, WebhookEntry, WebhooksSettings } from '@tributary/schemas';
import { standardWebhooksSignature, xSignature } from './signing.js';

export const USER_AGENT = 'Tributary/1.0';

export interface WebhookRequest {
  method: 'POST';
  headers: Record<string, string>;
  body: Buffer;
}

const RESERVED = new Set([...RESERVED_HEADERS, ...HOP_BY_HOP_HEADERS]);

export function buildRequest(
  delivery: Pick<Delivery, 'deliveryId' | 'body'>,
  settings: Pick<WebhooksSettings, 'sharedSecret' | 'standardWebhooksSecret'>,
  entry: WebhookEntry,
  attemptAt: number,
): WebhookRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry.headers)) {
    if (!RESERVED.has(name.toLowerCase())) headers[name] = value;
  }
  headers['user-agent'] = USER_AGENT;
  headers['content-type'] = 'application/json';
  if (settings.sharedSecret) headers['x-signature'] = xSignature(settings.sharedSecret, delivery.body);
  if (settings.standardWebhooksSecret) {
    // The delivery id (<destination>/<source>/<message>) is stable across retries and replays, so a
    // receiver can use webhook-id to drop repeats, as Standard Webhooks intends.
    const timestamp = Math.floor(attemptAt / 1000);
    headers['webhook-id'] = delivery.deliveryId;
    headers['webhook-timestamp'] = String(timestamp);
    headers['webhook-signature'] = standardWebhooksSignature(settings.standardWebhooksSecret, delivery.deliveryId, timestamp, delivery.body);
  }
  return { method: 'POST', headers, body: delivery.body };
}
