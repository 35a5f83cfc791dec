import { describe, expect, it } from 'vitest';
import { standardWebhooksSignature, xSignature } from './signing.js';

describe('xSignature', () => {
  it('is the hex HMAC-SHA1 of the body (RFC 2202-style vector)', () => {
    expect(xSignature('key', Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe('de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9');
  });

  it('keys with the UTF-8 bytes of the secret and signs the body bytes as given', () => {
    const body = Buffer.from('{"name":"Zoë","emoji":"🚀"}', 'utf8');
    expect(xSignature('clé', body)).toBe(xSignature('clé', Buffer.from(body)));
    expect(xSignature('clé', body)).not.toBe(xSignature('cle', body));
    expect(xSignature('clé', body)).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('standardWebhooksSignature', () => {
  it('matches the Standard Webhooks reference vector', () => {
    const signature = standardWebhooksSignature(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      Buffer.from('{"test": 2432232314}'),
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('changes with the id and the timestamp', () => {
    const body = Buffer.from('{}');
    const base = standardWebhooksSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'a', 1, body);
    expect(standardWebhooksSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'b', 1, body)).not.toBe(base);
    expect(standardWebhooksSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'a', 2, body)).not.toBe(base);
  });
});
