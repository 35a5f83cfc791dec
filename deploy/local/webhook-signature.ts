import { createHmac, timingSafeEqual } from 'node:crypto';

/** The Webhooks destination's signature: hex HMAC-SHA1 of the exact body bytes. */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha1', secret).update(body).digest('hex');
}

export type SignatureCheck = 'valid' | 'invalid' | 'missing';

export function checkSignature(secret: string, body: Buffer, header: string | string[] | undefined): SignatureCheck {
  const given = Array.isArray(header) ? header[0] : header;
  if (!given) return 'missing';
  const expected = Buffer.from(signBody(secret, body), 'hex');
  const actual = /^[0-9a-fA-F]+$/.test(given) ? Buffer.from(given, 'hex') : Buffer.alloc(0);
  return actual.length === expected.length && timingSafeEqual(actual, expected) ? 'valid' : 'invalid';
}

/** type and messageId of a webhook body, tolerating anything that is not the expected JSON. */
export function summarizeWebhook(body: Buffer): { type: string; messageId: string } {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { type?: unknown; messageId?: unknown };
    return {
      type: typeof parsed.type === 'string' ? parsed.type : '?',
      messageId: typeof parsed.messageId === 'string' ? parsed.messageId : '?',
    };
  } catch {
    return { type: '(not JSON)', messageId: '?' };
  }
}
