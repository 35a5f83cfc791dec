import { describe, expect, it } from 'vitest';
import { clientAddress, parseTrustProxy } from './client-address.js';

describe('parseTrustProxy', () => {
  it('reads false, true and a hop count', () => {
    expect(parseTrustProxy('false')).toBe(0);
    expect(parseTrustProxy('0')).toBe(0);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy(' TRUE ')).toBe(Number.POSITIVE_INFINITY);
    expect(parseTrustProxy('10.0.0.0/8')).toBeUndefined();
    expect(parseTrustProxy('-1')).toBeUndefined();
  });
});

describe('clientAddress', () => {
  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress('198.51.100.7', '203.0.113.1', 0)).toBe('198.51.100.7');
    expect(clientAddress('198.51.100.7', undefined, 1)).toBe('198.51.100.7');
  });

  it('writes an IPv4-mapped peer as IPv4', () => {
    expect(clientAddress('::ffff:198.51.100.7', undefined, 0)).toBe('198.51.100.7');
    expect(clientAddress('2001:db8::5', undefined, 0)).toBe('2001:db8::5');
  });

  it('takes the address the n-th trusted proxy appended, so a client cannot forge it', () => {
    // The client sent "X-Forwarded-For: 10.9.9.9"; the one balancer appended the address it saw.
    expect(clientAddress('10.0.0.2', '10.9.9.9, 203.0.113.5', 1)).toBe('203.0.113.5');
    // Two proxies: the outer appended the client, the inner the outer.
    expect(clientAddress('10.0.0.2', '203.0.113.5, 10.0.0.9', 2)).toBe('203.0.113.5');
    // Repeated headers are one list.
    expect(clientAddress('10.0.0.2', ['203.0.113.5', '10.0.0.9'], 2)).toBe('203.0.113.5');
  });

  it('with every hop trusted, takes the first address (Fastify trustProxy: true)', () => {
    expect(clientAddress('10.0.0.2', '203.0.113.5, 10.0.0.8, 10.0.0.9', Number.POSITIVE_INFINITY)).toBe('203.0.113.5');
  });

  it('reads addresses written with a port, and stops at a hop that is not an address', () => {
    expect(clientAddress('10.0.0.2', '203.0.113.5:5123', 1)).toBe('203.0.113.5');
    expect(clientAddress('10.0.0.2', '[2001:db8::1]:443', 1)).toBe('2001:db8::1');
    expect(clientAddress('10.0.0.2', '203.0.113.5, unknown', 2)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', 'unknown, 10.0.0.9', 2)).toBe('10.0.0.9');
    expect(clientAddress('10.0.0.2', '', 1)).toBe('10.0.0.2');
  });
});
