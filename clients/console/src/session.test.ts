import { describe, expect, it } from 'vitest';
import { forgetToken, normaliseToken, readToken, saveToken, type TokenStorage } from './session';

function memoryStorage(): TokenStorage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

describe('token storage', () => {
  it('keeps, reads back and forgets the token', () => {
    const storage = memoryStorage();
    expect(readToken(storage)).toBeNull();
    saveToken(storage, 'secret-token');
    expect(readToken(storage)).toBe('secret-token');
    forgetToken(storage);
    expect(readToken(storage)).toBeNull();
    expect(storage.items.size).toBe(0);
  });

  it('treats a blank stored value as no token', () => {
    const storage = memoryStorage();
    saveToken(storage, '  ');
    expect(readToken(storage)).toBeNull();
  });
});

describe('normaliseToken', () => {
  it('accepts the token alone or a pasted header line', () => {
    expect(normaliseToken('  abc123 ')).toBe('abc123');
    expect(normaliseToken('Bearer abc123')).toBe('abc123');
    expect(normaliseToken('Authorization: Bearer abc123')).toBe('abc123');
  });

  it('refuses empty input and tokens with spaces, which the API cannot take either', () => {
    expect(normaliseToken('')).toBeNull();
    expect(normaliseToken('Bearer ')).toBeNull();
    expect(normaliseToken('two words')).toBeNull();
  });
});
