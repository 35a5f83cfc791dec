import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigFileError } from './config-file.js';
import { EnvError } from './env.js';
import { INVALID_SETTINGS_EXIT_CODE, startFailureExitCode } from './lifecycle.js';

describe('startFailureExitCode', () => {
  it('is 2 for what the user gave the service, which no restart fixes', () => {
    expect(INVALID_SETTINGS_EXIT_CODE).toBe(2);
    expect(startFailureExitCode(new EnvError(['KAFKA_BROKERS: required']))).toBe(2);
    expect(startFailureExitCode(new ConfigFileError('/c.yaml', [{ path: 'sources', message: 'expected a list' }]))).toBe(2);
    expect(startFailureExitCode(new ConfigFileError('/missing.yaml', [{ path: '', message: 'cannot be read: ENOENT' }], true))).toBe(2);
  });

  it('is 1 for everything else (Kafka away, a bug), which a restart may well fix', () => {
    expect(startFailureExitCode(new Error('connect ECONNREFUSED 127.0.0.1:9092'))).toBe(1);
    expect(startFailureExitCode('thrown string')).toBe(1);
  });
});

// The exit status is what npm start's supervisor sees, so check it on a real process. The child
// loads the built module (`npm test` builds first): plain node cannot load the TypeScript source.
const BUILT = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js')).href;

function exitStatusOfServiceWhoseStart(throwing: string, env: Record<string, string> = {}): number | null {
  const script = `
    const { runService, ConfigFileError } = await import(${JSON.stringify(BUILT)});
    await runService({ name: 'probe', env: {}, async start() { ${throwing} } });
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', KAFKA_BROKERS: '127.0.0.1:1', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1', LOG_LEVEL: 'fatal', ...env },
    timeout: 30_000,
  });
  return result.status;
}

describe('runService', () => {
  it('exits 2 when the config file is refused', () => {
    expect(exitStatusOfServiceWhoseStart("throw new ConfigFileError('/c.yaml', [{ path: 'sources', message: 'bad' }]);")).toBe(2);
  });

  it('exits 2 on invalid settings', () => {
    expect(exitStatusOfServiceWhoseStart('', { KAFKA_BROKERS: '' })).toBe(2);
  });

  it('exits 1 when start fails for another reason', () => {
    expect(exitStatusOfServiceWhoseStart("throw new Error('broker away');")).toBe(1);
  });
});
