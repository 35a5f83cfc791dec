import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { resolveSettings } from './settings.js';

describe('resolveSettings', () => {
  it('prefers flags, then TRIBUTARY_*, then ADMIN_TOKEN and the default URL', () => {
    expect(resolveSettings({}, { ADMIN_TOKEN: 'a' })).toEqual({ url: 'http://127.0.0.1:8080', token: 'a' });
    expect(resolveSettings({}, { ADMIN_TOKEN: 'a', TRIBUTARY_ADMIN_TOKEN: 'b', TRIBUTARY_URL: 'https://ingest.example.com/' })).toEqual({ url: 'https://ingest.example.com', token: 'b' });
    expect(resolveSettings({ url: 'http://10.0.0.1:9000', token: 'c' }, { TRIBUTARY_ADMIN_TOKEN: 'b', TRIBUTARY_URL: 'http://x' })).toEqual({ url: 'http://10.0.0.1:9000', token: 'c' });
    expect(resolveSettings({}, { TRIBUTARY_ADMIN_TOKEN: '', ADMIN_TOKEN: 'a' }).token).toBe('a');
  });

  it('refuses a missing token and a URL that is not http(s), with exit code 2', () => {
    for (const [options, env, message] of [
      [{}, {}, 'no admin token: set TRIBUTARY_ADMIN_TOKEN (or ADMIN_TOKEN), or pass --token'],
      [{ url: 'ingest:8080' }, { ADMIN_TOKEN: 'a' }, '"ingest:8080" must be an http or https URL'],
      [{ url: 'not a url' }, { ADMIN_TOKEN: 'a' }, '"not a url" is not a URL; give the ingest service\'s base URL, e.g. http://127.0.0.1:8080'],
    ] as const) {
      let error: unknown;
      try {
        resolveSettings(options, env);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(CliError);
      expect([(error as CliError).message, (error as CliError).exitCode]).toEqual([message, 2]);
    }
  });
});
