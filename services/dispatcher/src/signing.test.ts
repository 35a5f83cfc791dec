import { describe, expect, it } from 'vitest';
import { standardWebhooksSignature, xSignature } from './signing.js';

describe('xSignature', () => {
  it('is the hex HMAC-SHA1 of the body (RFC 2202-style vector)', () => {
    expect(xSignature('key', Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe('de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9');
  });

  // Vectors computed outside Node, over the UTF-8 bytes of the body (a UTF-8 shell passes the
  // secret's UTF-8 bytes, 'clé' = 63 6c c3 a9):
  //   printf '%s' '{"name":"Zoë","emoji":"🚀"}' > body.json
  //   openssl dgst -sha1 -hmac 'shared-secret' body.json  # 224e5d4eb4153f7b01e7504c92ddbf176eea736a
  //   openssl dgst -sha1 -hmac 'clé' body.json            # 5f673595377290994d7c762b479c17657b9a9fb6
  // Python's hmac.new(secret.encode('utf-8'), body, hashlib.sha1) gives the same; keyed with
  // secret.encode('latin-1') (63 6c e9), 'clé' gives a83d6eef1d93c2c8f8770b72dc4a863ab637f5b8.
  const body = Buffer.from('{"name":"Zoë","emoji":"🚀"}', 'utf8');

  it('signs the body bytes as given (ASCII secret)', () => {
    expect(xSignature('shared-secret', body)).toBe('224e5d4eb4153f7b01e7504c92ddbf176eea736a');
  });

  it('keys with the UTF-8 bytes of a non-ASCII secret, not its latin1 bytes', () => {
    expect(xSignature('clé', body)).toBe('5f673595377290994d7c762b479c17657b9a9fb6');
    expect(xSignature('clé', body)).not.toBe('a83d6eef1d93c2c8f8770b72dc4a863ab637f5b8');
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
