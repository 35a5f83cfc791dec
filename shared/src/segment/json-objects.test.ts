import { describe, expect, it } from 'vitest';
import { isJsonObject, mergeContext, mergeIntegrations } from './json-objects.js';

describe('isJsonObject', () => {
  it('accepts objects only', () => {
    expect(isJsonObject({})).toBe(true);
    expect(isJsonObject([])).toBe(false);
    expect(isJsonObject(null)).toBe(false);
    expect(isJsonObject('x')).toBe(false);
  });
});

describe('mergeContext', () => {
  it('puts the batch context under the message context; the message wins on conflicts, deeply', () => {
    const batch = { library: { name: 'analytics-go', version: '2.1.1' }, ip: '203.0.113.9', app: { name: 'shop' } };
    const message = { library: { version: '3.0.0' }, ip: '198.51.100.1', locale: 'fr-FR' };
    expect(mergeContext(batch, message)).toEqual({
      library: { name: 'analytics-go', version: '3.0.0' },
      ip: '198.51.100.1',
      app: { name: 'shop' },
      locale: 'fr-FR',
    });
  });

  it('replaces rather than merges when only one side is an object', () => {
    expect(mergeContext({ device: { id: 'a' }, tags: ['x'] }, { device: 'phone', tags: ['y'] })).toEqual({ device: 'phone', tags: ['y'] });
    expect(mergeContext({ device: 'phone' }, { device: { id: 'a' } })).toEqual({ device: { id: 'a' } });
  });

  it('keeps an explicit null from the message', () => {
    expect(mergeContext({ ip: '203.0.113.9' }, { ip: null })).toEqual({ ip: null });
  });

  it('returns whichever side exists, and nothing when neither does', () => {
    const only = { a: 1 };
    expect(mergeContext(only, undefined)).toBe(only);
    expect(mergeContext(undefined, only)).toBe(only);
    expect(mergeContext(undefined, undefined)).toBeUndefined();
  });

  it('leaves both inputs untouched', () => {
    const batch = { library: { name: 'go' } };
    const message = { library: { version: '1' } };
    mergeContext(batch, message);
    expect(batch).toEqual({ library: { name: 'go' } });
    expect(message).toEqual({ library: { version: '1' } });
  });

  it('copies a __proto__ key as data without touching any prototype', () => {
    const batch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const message = JSON.parse('{"__proto__": {"also": true}}') as Record<string, unknown>;
    const merged = mergeContext(batch, message)!;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(merged))).toEqual(JSON.parse('{"__proto__": {"polluted": true, "also": true}, "a": 1}'));
  });
});

describe('mergeIntegrations', () => {
  it('takes the top-level object (analytics-go v2)', () => {
    expect(mergeIntegrations({ All: false, Webhooks: true }, { ip: 'x' })).toEqual({ All: false, Webhooks: true });
  });

  it('takes context.integrations (analytics.js)', () => {
    expect(mergeIntegrations(undefined, { integrations: { Webhooks: false } })).toEqual({ Webhooks: false });
  });

  it('merges both, the top-level entry winning per key', () => {
    expect(mergeIntegrations({ Webhooks: true, Mixpanel: false }, { integrations: { Webhooks: false, All: false } })).toEqual({
      Webhooks: true,
      Mixpanel: false,
      All: false,
    });
  });

  it('ignores a context.integrations that is not an object', () => {
    expect(mergeIntegrations(undefined, { integrations: 'all' })).toBeUndefined();
    expect(mergeIntegrations({ All: true }, { integrations: [1] })).toEqual({ All: true });
  });

  it('is undefined when neither is given', () => {
    expect(mergeIntegrations(undefined, undefined)).toBeUndefined();
    expect(mergeIntegrations(undefined, {})).toBeUndefined();
  });

  it('keeps destination keys case-sensitive', () => {
    expect(mergeIntegrations({ webhooks: false }, { integrations: { Webhooks: true } })).toEqual({ Webhooks: true, webhooks: false });
  });
});
