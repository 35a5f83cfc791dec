import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { commonEnv, EnvError, envTypes, loadEnv } from './env.js';

describe('loadEnv', () => {
  const shape = {
    ...commonEnv,
    WEBHOOK_TIMEOUT: envTypes.duration('5s'),
    RETRY_LADDER: envTypes.durationList('10s,1m'),
    FLAG: envTypes.boolean(false),
    PORT: envTypes.port(8080),
  };

  it('parses and applies defaults', () => {
    const env = loadEnv(shape, {
      KAFKA_BROKERS: '127.0.0.1:9092, 127.0.0.1:9093',
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/apis/ccompat/v7',
      FLAG: 'true',
    });
    expect(env.KAFKA_BROKERS).toEqual(['127.0.0.1:9092', '127.0.0.1:9093']);
    expect(env.WEBHOOK_TIMEOUT).toBe(5000);
    expect(env.RETRY_LADDER).toEqual([10_000, 60_000]);
    expect(env.FLAG).toBe(true);
    expect(env.PORT).toBe(8080);
    expect(env.LOG_LEVEL).toBe('info');
    expect(env.SHUTDOWN_TIMEOUT).toBe(30_000);
  });

  it('names every missing or bad variable', () => {
    let error: unknown;
    try {
      loadEnv(shape, { SCHEMA_REGISTRY_URL: 'not a url', WEBHOOK_TIMEOUT: '5', FLAG: 'maybe', PORT: '99999' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EnvError);
    const problems = (error as EnvError).problems.join('\n');
    expect(problems).toMatch(/KAFKA_BROKERS: is required but not set/);
    expect(problems).toMatch(/SCHEMA_REGISTRY_URL: must be an absolute URL/);
    expect(problems).toMatch(/WEBHOOK_TIMEOUT: invalid duration "5"/);
    expect(problems).toMatch(/FLAG: must be true or false/);
    expect(problems).toMatch(/PORT:/);
  });

  it('treats an empty string as unset', () => {
    const env = loadEnv({ NAME: z.string().default('fallback') }, { NAME: '' });
    expect(env.NAME).toBe('fallback');
  });

  it('refuses an empty duration list', () => {
    expect(() => loadEnv({ RETRY_LADDER: envTypes.durationList() }, { RETRY_LADDER: ' , ' })).toThrow(
      /RETRY_LADDER: needs at least one duration/,
    );
  });
});
