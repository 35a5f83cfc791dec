import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { localSettings, readinessUrl, SERVICE_NODE_ARGS, serviceEnv } from './service-env.js';

const stack = { brokers: ['127.0.0.1:9092'], registryUrl: 'http://127.0.0.1:8081/apis/ccompat/v7' };
const resolvePath = (p: string): string => (p.startsWith('/') ? p : `/cwd/${p}`);

describe('localSettings', () => {
  it('has local defaults', () => {
    expect(localSettings({}, '/repo/deploy/local/tributary.yaml', resolvePath)).toEqual({
      configPath: '/repo/deploy/local/tributary.yaml',
      adminToken: 'tributary-local-admin',
      ingestPort: 8080,
      deliveryLogDir: '/cwd/.tributary/data/delivery-log',
    });
  });

  it('takes the user overrides, resolving a relative config path', () => {
    const s = localSettings({ TRIBUTARY_CONFIG: 'my.yaml', ADMIN_TOKEN: 't', INGEST_PORT: '3000' }, '/d.yaml', resolvePath);
    expect(s).toEqual({ configPath: '/cwd/my.yaml', adminToken: 't', ingestPort: 3000, deliveryLogDir: '/cwd/.tributary/data/delivery-log' });
    expect(localSettings({ DELIVERY_LOG_DATA_DIR: '/var/log-db' }, '/d.yaml', resolvePath, '/data').deliveryLogDir).toBe('/var/log-db');
    expect(localSettings({}, '/d.yaml', resolvePath, '/data').deliveryLogDir).toBe('/data/delivery-log');
  });

  it('rejects a bad port', () => {
    expect(() => localSettings({ INGEST_PORT: 'eighty' }, '/d.yaml', resolvePath)).toThrow(/INGEST_PORT/);
  });
});

describe('serviceEnv', () => {
  const settings = localSettings({}, '/c.yaml', resolvePath);

  it('passes the user environment through and adds the stack', () => {
    const env = serviceEnv('router', { RETRY_LADDER: '1s,2s', LOG_LEVEL: 'debug', HTTP_PORT: '1' }, stack, settings);
    expect(env).toMatchObject({
      RETRY_LADDER: '1s,2s',
      LOG_LEVEL: 'debug',
      KAFKA_BROKERS: '127.0.0.1:9092',
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      TRIBUTARY_CONFIG: '/c.yaml',
      ADMIN_TOKEN: 'tributary-local-admin',
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      HTTP_PORT: '9101',
      HTTP_HOST: '127.0.0.1',
    });
    expect(serviceEnv('router', { HTTP_HOST: '0.0.0.0' }, stack, settings)['HTTP_HOST']).toBe('0.0.0.0');
  });

  it('gives each ops server its own port and ingest none', () => {
    expect(serviceEnv('dispatcher', {}, stack, settings)['HTTP_PORT']).toBe('9102');
    expect(serviceEnv('retry-scheduler', {}, stack, settings)['HTTP_PORT']).toBe('9103');
    expect(serviceEnv('indexer', {}, stack, settings)).toMatchObject({ HTTP_PORT: '9104', DELIVERY_LOG_DATA_DIR: '/cwd/.tributary/data/delivery-log' });
    expect(serviceEnv('ingest', {}, stack, settings)['DELIVERY_LOG_URL']).toBe('http://127.0.0.1:9104');
    // Ingest's heap is bounded unless the user bounds it; the others are left alone.
    expect(serviceEnv('ingest', {}, stack, settings)['NODE_OPTIONS']).toBe('--max-old-space-size=160');
    expect(serviceEnv('ingest', { NODE_OPTIONS: '--enable-source-maps' }, stack, settings)['NODE_OPTIONS']).toBe('--enable-source-maps --max-old-space-size=160');
    expect(serviceEnv('ingest', { NODE_OPTIONS: '--max-old-space-size=512' }, stack, settings)['NODE_OPTIONS']).toBe('--max-old-space-size=512');
    expect(serviceEnv('router', {}, stack, settings)['NODE_OPTIONS']).toBeUndefined();
    const ingest = serviceEnv('ingest', { HTTP_PORT: '1' }, stack, settings);
    expect(ingest['HTTP_PORT']).toBeUndefined();
    expect(ingest['INGEST_PORT']).toBe('8080');
  });

  it('keeps an explicit DELIVERY_ALLOW_PRIVATE_NETWORKS', () => {
    expect(serviceEnv('dispatcher', { DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false' }, stack, settings)['DELIVERY_ALLOW_PRIVATE_NETWORKS']).toBe('false');
  });

  it('joins several brokers with commas', () => {
    const env = serviceEnv('router', {}, { ...stack, brokers: ['a:1', 'b:2'] }, settings);
    expect(env['KAFKA_BROKERS']).toBe('a:1,b:2');
  });
});

describe('readinessUrl', () => {
  it('points at each service’s HTTP port', () => {
    const settings = localSettings({ INGEST_PORT: '8088' }, '/c.yaml', resolvePath);
    expect(readinessUrl('ingest', settings)).toBe('http://127.0.0.1:8088/readyz');
    expect(readinessUrl('router', settings)).toBe('http://127.0.0.1:9101/readyz');
  });
});

describe('SERVICE_NODE_ARGS', () => {
  it('are options this Node takes on a command line (an unknown or misspelt one stops node with "bad option")', () => {
    const run = spawnSync(process.execPath, [...SERVICE_NODE_ARGS, '-e', 'process.stdout.write(JSON.stringify(process.execArgv))'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect((JSON.parse(run.stdout) as string[]).slice(0, SERVICE_NODE_ARGS.length)).toEqual([...SERVICE_NODE_ARGS]);
  });
});
