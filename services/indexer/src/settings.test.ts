import { describe, expect, it } from 'vitest';
import { EnvError, loadServiceEnv } from '@tributary/shared';
import { describeDatabase, indexerEnv, redactDatabaseUrl } from './settings.js';

const base = { KAFKA_BROKERS: '127.0.0.1:9092', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081' };

describe('indexer settings', () => {
  it('defaults to the embedded database, a week of retention and port 9104', () => {
    const env = loadServiceEnv(indexerEnv, base);
    expect(env.HTTP_PORT).toBe(9104);
    expect(env.DELIVERY_LOG_DATABASE_URL).toBeUndefined();
    expect(env.DELIVERY_LOG_DATA_DIR).toBe('.tributary/delivery-log');
    expect(env.DELIVERY_LOG_RETENTION).toBe(7 * 86_400_000);
    expect(env.INDEXER_MAX_BATCH).toBe(2000);
    expect(env.INDEXER_SESSION_TIMEOUT).toBe(30_000);
    expect(env.INDEXER_NICE).toBe(10);
    expect(env.ADMIN_TOKEN).toBeUndefined();
  });

  it('takes a niceness from 0 to 19', () => {
    expect(loadServiceEnv(indexerEnv, { ...base, INDEXER_NICE: '0' }).INDEXER_NICE).toBe(0);
    expect(() => loadServiceEnv(indexerEnv, { ...base, INDEXER_NICE: '20' })).toThrow(/INDEXER_NICE/);
    expect(() => loadServiceEnv(indexerEnv, { ...base, INDEXER_NICE: '-5' })).toThrow(/INDEXER_NICE/);
  });

  it('names each bad setting without echoing a secret', () => {
    let caught: unknown;
    try {
      loadServiceEnv(indexerEnv, { ...base, DELIVERY_LOG_DATABASE_URL: 'mysql://u:hunter2@db/x', DELIVERY_LOG_RETENTION: '7', ADMIN_TOKEN: 'a b' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EnvError);
    const message = (caught as EnvError).message;
    expect(message).toMatch(/DELIVERY_LOG_DATABASE_URL: must be a postgres/);
    expect(message).toMatch(/DELIVERY_LOG_RETENTION/);
    expect(message).toMatch(/ADMIN_TOKEN/);
    expect(message).not.toContain('hunter2');
  });

  it('never shows the database password', () => {
    expect(redactDatabaseUrl('postgresql://tributary:s3cret@db:5432/log?sslmode=require')).toBe('postgresql://tributary:***@db:5432/log?sslmode=require');
    expect(redactDatabaseUrl('postgres://db/log?password=s3cret')).not.toContain('s3cret');
    expect(describeDatabase({ DELIVERY_LOG_DATA_DIR: '/var/lib/log' })).toBe('pglite:/var/lib/log');
    expect(describeDatabase({ DELIVERY_LOG_DATABASE_URL: 'postgresql://u:pw@h/d', DELIVERY_LOG_DATA_DIR: 'x' })).not.toContain('pw');
  });
});
