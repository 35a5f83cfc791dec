import { describe, expect, it } from 'vitest';
import { DEFAULT_LADDER, EnvError, ladderFromSettings, ladderTiers, loadEnv } from '@tributary/shared';
import { schedulerEnv } from './settings.js';

describe('retry scheduler settings', () => {
  it('default to the shared ladder and the spec 4 h window', () => {
    const env = loadEnv(schedulerEnv, {});
    expect(ladderFromSettings(env)).toEqual(DEFAULT_LADDER);
    expect(env.RETRY_WINDOW).toBe(4 * 3_600_000);
    expect(env.HTTP_PORT).toBe(9103);
    expect(env.RETRY_SCHEDULER_SESSION_TIMEOUT).toBe(30_000);
    expect(env.RETRY_SCHEDULER_TIER_SCAN_INTERVAL).toBe(60_000);
    expect(env.RETRY_SCHEDULER_NICE).toBe(10);
    expect(ladderTiers(ladderFromSettings(env)).map((tier) => tier.label)).toEqual(['10s', '1m', '5m', '15m', '30m', '1h']);
  });

  it('reads a ladder scaled down to milliseconds', () => {
    const env = loadEnv(schedulerEnv, { RETRY_LADDER: '100ms,200ms,400ms,800ms,1600ms', RETRY_WINDOW: '3s' });
    expect(ladderFromSettings(env)).toEqual({ delaysMs: [100, 200, 400, 800, 1600], windowMs: 3000 });
  });

  it('takes a niceness of 0 to 19', () => {
    expect(loadEnv(schedulerEnv, { RETRY_SCHEDULER_NICE: '0' }).RETRY_SCHEDULER_NICE).toBe(0);
    expect(() => loadEnv(schedulerEnv, { RETRY_SCHEDULER_NICE: '20' })).toThrow(/RETRY_SCHEDULER_NICE/);
    expect(() => loadEnv(schedulerEnv, { RETRY_SCHEDULER_NICE: '-1' })).toThrow(/RETRY_SCHEDULER_NICE/);
  });

  it('refuses a ladder without units and a zero delay', () => {
    expect(() => loadEnv(schedulerEnv, { RETRY_LADDER: '10,20' })).toThrow(EnvError);
    expect(() => ladderFromSettings(loadEnv(schedulerEnv, { RETRY_LADDER: '0s' }))).toThrow('RETRY_LADDER delays must be positive');
  });
});
