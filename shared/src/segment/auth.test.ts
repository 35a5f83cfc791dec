import { describe, expect, it } from 'vitest';
import type { Source } from '@tributary/schemas';
import { authenticate, credentialsFromHeader, missingCredentials } from './auth.js';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('credentialsFromHeader', () => {
  it('reads the write key from the basic auth user name (empty password)', () => {
    expect(credentialsFromHeader(basic('wk_live_123:'))).toEqual({ kind: 'writeKey', writeKey: 'wk_live_123' });
  });

  it('accepts a scheme in any case and a user name without a colon', () => {
    expect(credentialsFromHeader(`bAsIc ${Buffer.from('wk_live_123').toString('base64')}`)).toEqual({ kind: 'writeKey', writeKey: 'wk_live_123' });
  });

  it('ignores a password', () => {
    expect(credentialsFromHeader(basic('wk_live_123:whatever'))).toEqual({ kind: 'writeKey', writeKey: 'wk_live_123' });
  });

  it('is none without a header', () => {
    expect(credentialsFromHeader(undefined)).toEqual({ kind: 'none' });
    expect(credentialsFromHeader('  ')).toEqual({ kind: 'none' });
  });

  it('explains a key put in the password', () => {
    expect(credentialsFromHeader(basic(':wk_live_123'))).toEqual({
      kind: 'malformed',
      problem: 'the basic auth user name is empty: the write key goes in the user name, and the password stays empty',
    });
  });

  it('leaves another scheme (an OAuth bearer token) to the body, with the answer for a body without a key', () => {
    const bearer = credentialsFromHeader('Bearer eyJhbGciOiJSUzI1NiJ9.token');
    expect(bearer.kind).toBe('otherScheme');
    expect(bearer.kind === 'otherScheme' && bearer.problem).toMatch(/not HTTP basic auth and the body has no "writeKey": send the write key as the HTTP basic auth user name/);
    expect(credentialsFromHeader('Digest username="x"').kind).toBe('otherScheme');
  });

  it('refuses basic auth that names no write key: it takes precedence over the body', () => {
    expect(credentialsFromHeader(basic(':')).kind).toBe('malformed');
    expect(credentialsFromHeader('Basic').kind).toBe('malformed');
    const garbled = credentialsFromHeader('Basic not*base64');
    expect(garbled).toMatchObject({ kind: 'malformed', problem: expect.stringMatching(/not valid HTTP basic auth/) as unknown as string });
  });
});

describe('authenticate', () => {
  const sources: Record<string, Source> = {
    wk_enabled_1: { id: 'web', name: 'Web', writeKey: 'wk_enabled_1', enabled: true },
    wk_disabled_1: { id: 'old', name: 'Old', writeKey: 'wk_disabled_1', enabled: false },
  };
  const lookup = (key: string) => sources[key];

  it('finds the source of an enabled write key', () => {
    expect(authenticate('wk_enabled_1', lookup)).toEqual({ ok: true, source: sources.wk_enabled_1 });
  });

  it('refuses an unknown key with 401 invalid_write_key, without repeating it', () => {
    const result = authenticate('wk_unknown_secret', lookup);
    expect(result).toMatchObject({ ok: false, error: { status: 401, code: 'invalid_write_key' } });
    expect(JSON.stringify(result)).not.toContain('wk_unknown_secret');
  });

  it('refuses a disabled source with 401 invalid_write_key', () => {
    const result = authenticate('wk_disabled_1', lookup);
    expect(result).toMatchObject({ ok: false, error: { status: 401, code: 'invalid_write_key', error: 'invalid write key: source "old" is disabled' } });
    expect(JSON.stringify(result)).not.toContain('wk_disabled_1');
  });

  it('says how to authenticate when no key was sent', () => {
    expect(missingCredentials()).toMatchObject({
      status: 401,
      code: 'missing_write_key',
      error: expect.stringContaining('curl -u WRITE_KEY:'),
      headers: { 'www-authenticate': expect.stringMatching(/^Basic /) },
    });
  });
});
