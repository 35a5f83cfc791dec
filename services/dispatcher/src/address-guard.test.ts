import { describe, expect, it } from 'vitest';
import { isBlockedAddress } from './address-guard.js';

describe('isBlockedAddress', () => {
  it.each([
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '127.1.2.3',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
  ])('blocks IPv4 %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.1', '198.17.255.255', '198.20.0.0', '223.255.255.255', '11.0.0.1'])(
    'allows public IPv4 %s',
    (address) => {
      expect(isBlockedAddress(address)).toBe(false);
    },
  );

  it.each(['::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'ff02::1', '[::1]', 'FD00::ABCD'])('blocks IPv6 %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(['2001:4860:4860::8888', '2606:4700:4700::1111', 'fec0::1', '2001:db8::1'])('allows public IPv6 %s', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it.each([
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '::a00:1',
    '64:ff9b::10.0.0.1',
    '64:ff9b::c0a8:101',
    '[::ffff:192.168.0.1]',
  ])('judges IPv4-mapped, -compatible and NAT64 forms by the IPv4 ranges: %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it('allows the embedded forms of public IPv4 addresses', () => {
    expect(isBlockedAddress('::ffff:8.8.8.8')).toBe(false);
    expect(isBlockedAddress('::ffff:808:808')).toBe(false);
    expect(isBlockedAddress('64:ff9b::8.8.8.8')).toBe(false);
  });

  it('treats anything that is not an IP address as blocked', () => {
    expect(isBlockedAddress('localhost')).toBe(true);
    expect(isBlockedAddress('example.com')).toBe(true);
    expect(isBlockedAddress('')).toBe(true);
  });
});
