import { describe, expect, it } from 'vitest';
import { EnvError, loadEnv } from '@tributary/shared';
import { DEFAULT_BREAKER } from './breaker.js';
import { ladderFromSettings } from '@tributary/shared';
import { breakerFromSettings, dispatcherEnv, dnsTryTimeoutMs, isNameServer } from './settings.js';

describe('dispatcher settings', () => {
  it('default to the spec: a 5 s answer window, a 4 h retry window, the SSRF guard on', () => {
    const env = loadEnv(dispatcherEnv, {});
    expect(env.WEBHOOK_TIMEOUT).toBe(5000);
    expect(env.RETRY_WINDOW).toBe(4 * 3_600_000);
    expect(env.RETRY_LADDER).toEqual([10_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000]);
    expect(env.DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(false);
    expect(env.HTTP_PORT).toBe(9102);
    expect(env.DELIVERY_MAX_IN_FLIGHT).toBe(512);
    expect(env.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION).toBe(64);
  });

  it('read name servers for webhook hosts, unset by default, and refuse what is not an address', () => {
    expect(loadEnv(dispatcherEnv, {}).DELIVERY_DNS_SERVERS).toBeUndefined();
    expect(loadEnv(dispatcherEnv, { DELIVERY_DNS_SERVERS: '10.0.0.10, 127.0.0.1:5353,[::1]:53,fd00::53' }).DELIVERY_DNS_SERVERS).toEqual(['10.0.0.10', '127.0.0.1:5353', '[::1]:53', 'fd00::53']);
    expect(() => loadEnv(dispatcherEnv, { DELIVERY_DNS_SERVERS: 'dns.example.com' })).toThrow(/DELIVERY_DNS_SERVERS/);
    for (const bad of ['10.0.0.1:0', '10.0.0.1:70000', '[10.0.0.1]:53', '::1:53x', '']) expect(isNameServer(bad), bad).toBe(false);
    expect(dnsTryTimeoutMs(5000)).toBe(1250);
    expect(dnsTryTimeoutMs(60_000)).toBe(2000);
    expect(dnsTryTimeoutMs(100)).toBe(200);
  });

  it('reads overrides, including a ladder scaled down for tests', () => {
    const env = loadEnv(dispatcherEnv, { WEBHOOK_TIMEOUT: '1s', DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true', RETRY_LADDER: '100ms,200ms', RETRY_WINDOW: '2s' });
    expect(env.WEBHOOK_TIMEOUT).toBe(1000);
    expect(env.DELIVERY_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(ladderFromSettings(env)).toEqual({ delaysMs: [100, 200], windowMs: 2000 });
  });

  it('default the circuit breaker to DEFAULT_BREAKER and read its overrides', () => {
    expect(breakerFromSettings(loadEnv(dispatcherEnv, {}))).toEqual(DEFAULT_BREAKER);
    const env = loadEnv(dispatcherEnv, { CIRCUIT_FAILURES: '2', CIRCUIT_FAILURE_RATIO: '0.9', CIRCUIT_OPEN: '200ms', CIRCUIT_MAX_OPEN: '1s', CIRCUIT_PROBES: '1' });
    expect(breakerFromSettings(env)).toMatchObject({ consecutiveFailures: 2, failureRatio: 0.9, openMs: 200, maxOpenMs: 1000, probes: 1 });
    // A probe is taken for lost after its wait for a slot and twice the answer window.
    expect(breakerFromSettings(loadEnv(dispatcherEnv, { WEBHOOK_TIMEOUT: '2s', DELIVERY_MAX_QUEUE_WAIT: '500ms' })).probeTimeoutMs).toBe(4_500);
    expect(() => loadEnv(dispatcherEnv, { CIRCUIT_FAILURE_RATIO: '1.5' })).toThrow(/CIRCUIT_FAILURE_RATIO/);
  });

  it('refuses a timeout without a unit and a flag that is not a boolean', () => {
    expect(() => loadEnv(dispatcherEnv, { WEBHOOK_TIMEOUT: '5', DELIVERY_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(EnvError);
  });
});
