import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkSignature, signBody, summarizeWebhook } from './webhook-signature.js';

const body = Buffer.from(JSON.stringify({ type: 'track', messageId: 'm-1', event: 'Signed Up' }));

describe('checkSignature', () => {
  it('accepts hex HMAC-SHA1 of the exact bytes', () => {
    const sig = createHmac('sha1', 'local-demo-secret').update(body).digest('hex');
    expect(signBody('local-demo-secret', body)).toBe(sig);
    expect(checkSignature('local-demo-secret', body, sig)).toBe('valid');
    expect(checkSignature('local-demo-secret', body, sig.toUpperCase())).toBe('valid');
  });

  it('rejects another secret, altered bytes, and garbage', () => {
    const sig = signBody('local-demo-secret', body);
    expect(checkSignature('other', body, sig)).toBe('invalid');
    expect(checkSignature('local-demo-secret', Buffer.concat([body, Buffer.from(' ')]), sig)).toBe('invalid');
    expect(checkSignature('local-demo-secret', body, 'not-hex')).toBe('invalid');
    expect(checkSignature('local-demo-secret', body, sig.slice(2))).toBe('invalid');
  });

  it('reports a missing header', () => {
    expect(checkSignature('s', body, undefined)).toBe('missing');
  });
});

describe('summarizeWebhook', () => {
  it('extracts type and messageId', () => {
    expect(summarizeWebhook(body)).toEqual({ type: 'track', messageId: 'm-1' });
  });

  it('survives bodies that are not the expected JSON', () => {
    expect(summarizeWebhook(Buffer.from('<html>'))).toEqual({ type: '(not JSON)', messageId: '?' });
    expect(summarizeWebhook(Buffer.from('{"type":1}'))).toEqual({ type: '?', messageId: '?' });
  });
});
