import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { buildRequest, USER_AGENT } from './request.js';
import { xSignature } from './signing.js';

const delivery = { deliveryId: 'crm/msg-1', body: Buffer.from('{"type":"track","event":"Signed Up"}') };
const entry = { url: 'https://hooks.example.com/in', headers: { 'X-Team': 'growth', Authorization: 'Bearer t0ken' } };
const noSecrets = { sharedSecret: null, standardWebhooksSecret: null };
const attemptAt = 1_700_000_000_123;

describe('buildRequest', () => {
  it('POSTs the body bytes as they are, with our User-Agent, JSON content type and the static headers', () => {
    const request = buildRequest(delivery, noSecrets, entry, attemptAt);
    expect(request.method).toBe('POST');
    expect(request.body).toBe(delivery.body);
    expect(request.headers).toEqual({
      'X-Team': 'growth',
      Authorization: 'Bearer t0ken',
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
    });
    expect(USER_AGENT).toBe('Tributary/1.0');
  });

  it('adds X-Signature only when a shared secret is set', () => {
    expect(buildRequest(delivery, noSecrets, entry, attemptAt).headers).not.toHaveProperty('x-signature');
    const signed = buildRequest(delivery, { ...noSecrets, sharedSecret: 's3cret' }, entry, attemptAt);
    expect(signed.headers['x-signature']).toBe(xSignature('s3cret', delivery.body));
  });

  it('never lets a static header replace a header the dispatcher sets', () => {
    const sneaky = { url: entry.url, headers: { 'User-Agent': 'evil', 'X-Signature': 'forged', 'Content-Type': 'text/plain', 'X-Ok': '1' } };
    const request = buildRequest(delivery, { ...noSecrets, sharedSecret: 's' }, sneaky, attemptAt);
    expect(request.headers).toEqual({
      'X-Ok': '1',
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'x-signature': xSignature('s', delivery.body),
    });
  });

  it('drops hop-by-hop headers undici would refuse, written to the config topic past validation', () => {
    const hopByHop = { url: entry.url, headers: { Expect: '100-continue', 'Keep-Alive': 'timeout=5', Upgrade: 'h2c', TE: 'trailers', 'X-Ok': '1' } };
    expect(buildRequest(delivery, noSecrets, hopByHop, attemptAt).headers).toEqual({ 'X-Ok': '1', 'user-agent': USER_AGENT, 'content-type': 'application/json' });
  });

  it('adds Standard Webhooks headers that the standardwebhooks package verifies', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const now = Date.now();
    const request = buildRequest(delivery, { sharedSecret: 'x', standardWebhooksSecret: secret }, entry, now);
    expect(request.headers['webhook-id']).toBe('crm/msg-1');
    expect(request.headers['webhook-timestamp']).toBe(String(Math.floor(now / 1000)));
    expect(request.headers['x-signature']).toBe(xSignature('x', delivery.body));
    expect(new Webhook(secret).verify(delivery.body, request.headers)).toEqual(JSON.parse(delivery.body.toString()));
  });

  it('keeps webhook-id stable across attempts while the timestamp follows the attempt', () => {
    const settings = { sharedSecret: null, standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
    const first = buildRequest(delivery, settings, entry, attemptAt);
    const later = buildRequest(delivery, settings, entry, attemptAt + 60_000);
    expect(later.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(Number(later.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp'])).toBe(60);
    expect(later.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
  });
});
