import { describe, expect, it } from 'vitest';
import { checkBearer } from './bearer.js';

describe('checkBearer', () => {
  it('accepts the token, whatever the scheme case', () => {
    expect(checkBearer('Bearer s3cret-token', 's3cret-token')).toEqual({ ok: true });
    expect(checkBearer('bearer s3cret-token ', 's3cret-token')).toEqual({ ok: true });
  });

  it('tells a missing header from a malformed one and a wrong token', () => {
    expect(checkBearer(undefined, 't')).toEqual({ ok: false, reason: 'missing' });
    expect(checkBearer('  ', 't')).toEqual({ ok: false, reason: 'missing' });
    expect(checkBearer('Basic dDo=', 't')).toEqual({ ok: false, reason: 'malformed' });
    expect(checkBearer('Bearer', 't')).toEqual({ ok: false, reason: 'malformed' });
    expect(checkBearer('Bearer a b', 't')).toEqual({ ok: false, reason: 'malformed' });
    expect(checkBearer('Bearer T', 't')).toEqual({ ok: false, reason: 'wrong' });
    expect(checkBearer('Bearer s3cret-token-and-more', 's3cret-token')).toEqual({ ok: false, reason: 'wrong' });
    expect(checkBearer('Bearer s3cret', 's3cret-token')).toEqual({ ok: false, reason: 'wrong' });
  });
});
