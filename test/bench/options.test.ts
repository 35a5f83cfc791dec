import { describe, expect, it } from 'vitest';
import { parseNoisyOptions, parseOptions, scenarioOf } from './options.js';

describe('parseOptions', () => {
  it('defaults to the issue’s run', () => {
    expect(parseOptions([])).toMatchObject({
      profile: undefined,
      logLevel: 'warn',
      stepSeconds: 10,
      measuredSeconds: 6,
      holdSeconds: 60,
      steadyRate: 1000,
      steadySeconds: 60,
      keepTopics: false,
      ramp: { startRate: 2000, factor: 1.25 },
    });
  });

  it('starts every service, the indexer included, unless told to run the delivery path alone', () => {
    expect(parseOptions([]).services).toEqual(['ingest', 'router', 'dispatcher', 'retry-scheduler', 'indexer']);
    expect(parseOptions(['--without-indexer']).services).toEqual(['ingest', 'router', 'dispatcher', 'retry-scheduler']);
    expect(() => parseOptions(['--without-indexer', '--profile=indexer'])).toThrow(/does not start/);
  });

  it('takes a service to profile and refuses anything else', () => {
    expect(parseOptions(['--profile=dispatcher']).profile).toBe('dispatcher');
    expect(() => parseOptions(['--profile=kafka'])).toThrow(/--profile must name a service/);
  });

  it('takes settings for the services, by setting name only', () => {
    expect(parseOptions([]).settings).toEqual({});
    expect(parseOptions(['--set', 'DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION=256', '--set=LOG_LEVEL=a=b']).settings).toEqual({ DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '256', LOG_LEVEL: 'a=b' });
    expect(() => parseOptions(['--set', 'lower=1'])).toThrow(/--set takes KEY=VALUE/);
    expect(() => parseOptions(['--set', 'NOVALUE'])).toThrow(/--set takes KEY=VALUE/);
    expect(parseNoisyOptions(['--set', 'CIRCUIT_OPEN=10s']).settings).toEqual({ CIRCUIT_OPEN: '10s' });
  });

  it('refuses unknown options and bad numbers', () => {
    expect(() => parseOptions(['--rate=5'])).toThrow();
    expect(() => parseOptions(['--hold-seconds=-1'])).toThrow(/--hold-seconds must be a positive number/);
    expect(() => parseOptions(['--label=Before Fix'])).toThrow(/--label/);
  });
});

describe('scenarioOf / parseNoisyOptions', () => {
  it('defaults to the throughput run and names the noisy-neighbour scenario', () => {
    expect(scenarioOf([])).toBe('throughput');
    expect(scenarioOf(['--scenario=noisy-neighbour', '--burst-events=10'])).toBe('noisy-neighbour');
    expect(() => scenarioOf(['--scenario=chaos'])).toThrow(/--scenario/);
  });

  it('reads the scenario’s settings, with defaults for a 100,000-event burst per failing destination', () => {
    expect(parseNoisyOptions(['--scenario=noisy-neighbour'])).toMatchObject({
      burstEvents: 100_000,
      burstRate: 1_000,
      trickleRate: 20,
      warmupSeconds: 30,
      warmupMaxSeconds: 300,
      ladder: '10s,1m',
      window: '3m',
      logLevel: 'warn',
      slowMs: 0,
    });
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--slow-ms=2500']).slowMs).toBe(2_500);
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--burst-events=5000', '--window=30s', '--ladder=1s,2s'])).toMatchObject({ burstEvents: 5000, window: '30s', ladder: '1s,2s' });
    expect(() => parseNoisyOptions(['--scenario=noisy-neighbour', '--window=soon'])).toThrow(/invalid duration/);
    expect(() => parseNoisyOptions(['--scenario=noisy-neighbour', '--hold-seconds=5'])).toThrow();
  });

  it('warms up for at least --warmup-seconds and at most --warmup-max-seconds', () => {
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--warmup-max-seconds=30'])).toMatchObject({ warmupSeconds: 30, warmupMaxSeconds: 30 });
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--warmup-seconds=400'])).toMatchObject({ warmupSeconds: 400, warmupMaxSeconds: 400 });
    expect(() => parseNoisyOptions(['--scenario=noisy-neighbour', '--warmup-seconds=60', '--warmup-max-seconds=30'])).toThrow(/at least --warmup-seconds/);
  });

  it('warms the failing paths with 20,000 events unless told otherwise, and 0 turns that off', () => {
    expect(parseNoisyOptions(['--scenario=noisy-neighbour']).warmupFailingEvents).toBe(20_000);
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--warmup-failing-events=5000']).warmupFailingEvents).toBe(5_000);
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--warmup-failing-events=0']).warmupFailingEvents).toBe(0);
    expect(() => parseNoisyOptions(['--scenario=noisy-neighbour', '--warmup-failing-events=-1'])).toThrow(/positive number/);
  });

  it('profiles a service through the bursts, and only a service', () => {
    expect(parseNoisyOptions(['--scenario=noisy-neighbour']).profile).toBeUndefined();
    expect(parseNoisyOptions(['--scenario=noisy-neighbour', '--profile=router']).profile).toBe('router');
    expect(() => parseNoisyOptions(['--scenario=noisy-neighbour', '--profile=broker'])).toThrow(/--profile must name a service/);
  });
});
