import { describe, expect, it } from 'vitest';
import { parseOptions } from './options.js';

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

  it('takes a service to profile and refuses anything else', () => {
    expect(parseOptions(['--profile=dispatcher']).profile).toBe('dispatcher');
    expect(() => parseOptions(['--profile=kafka'])).toThrow(/--profile must name a service/);
  });

  it('refuses unknown options and bad numbers', () => {
    expect(() => parseOptions(['--rate=5'])).toThrow();
    expect(() => parseOptions(['--hold-seconds=-1'])).toThrow(/--hold-seconds must be a positive number/);
    expect(() => parseOptions(['--label=Before Fix'])).toThrow(/--label/);
  });
});
