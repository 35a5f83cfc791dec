import { describe, expect, it } from 'vitest';
import { loadServiceEnv, type EnvError } from '@tributary/shared';
import { routerEnv } from './settings.js';

const required = { KAFKA_BROKERS: '127.0.0.1:9092', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081' };

describe('router settings', () => {
  it('has documented defaults', () => {
    const env = loadServiceEnv(routerEnv, required);
    expect({
      port: env.HTTP_PORT,
      window: env.DEDUP_WINDOW,
      max: env.DEDUP_MAX_ENTRIES,
      batch: env.ROUTER_MAX_BATCH,
      session: env.ROUTER_SESSION_TIMEOUT,
    }).toEqual({ port: 9101, window: 86_400_000, max: 2_000_000, batch: 1000, session: 30_000 });
  });

  it('reads durations with units and refuses bad values, naming each', () => {
    expect(loadServiceEnv(routerEnv, { ...required, DEDUP_WINDOW: '90m', ROUTER_SESSION_TIMEOUT: '6s' })).toMatchObject({ DEDUP_WINDOW: 5_400_000, ROUTER_SESSION_TIMEOUT: 6_000 });
    let problems: string[] = [];
    try {
      loadServiceEnv(routerEnv, { ...required, DEDUP_WINDOW: '24', ROUTER_MAX_BATCH: '0', DEDUP_MAX_ENTRIES: '-5' });
    } catch (error) {
      problems = (error as EnvError).problems;
    }
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['DEDUP_MAX_ENTRIES', 'DEDUP_WINDOW', 'ROUTER_MAX_BATCH']);
  });
});
