import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_TYPES, type IngestMessage } from '@tributary/schemas';
import { FIXTURES } from './__fixtures__/messages.js';
import { parseFreeForm } from './message.js';
import { renderBody } from './render.js';

const render = (message: IngestMessage): Buffer => renderBody(message, parseFreeForm(message));
const golden = (type: string): Buffer => readFileSync(new URL(`./__golden__/${type}.json`, import.meta.url));

describe('golden bodies', () => {
  it.each(MESSAGE_TYPES)('%s renders byte for byte as __golden__/%s.json', (type) => {
    const body = render(FIXTURES[type]);
    expect(body.toString('utf8')).toBe(golden(type).toString('utf8'));
    expect(body.equals(golden(type))).toBe(true);
  });

  it('every golden body is its own JSON round trip (what a re-serialising receiver signs)', () => {
    for (const type of MESSAGE_TYPES) {
      const text = golden(type).toString('utf8');
      expect(JSON.stringify(JSON.parse(text))).toBe(text);
    }
  });
});

describe('body shape', () => {
  const keys = (message: IngestMessage): string[] => Object.keys(JSON.parse(render(message).toString('utf8')) as object);

  it('puts the common keys first, in the documented order, then the type fields', () => {
    expect(keys(FIXTURES.track)).toEqual([
      'version', 'type', 'messageId', 'userId', 'anonymousId', 'timestamp', 'context', 'receivedAt', 'sentAt', 'originalTimestamp', 'integrations', 'event', 'properties',
    ]);
    expect(keys(FIXTURES.page).slice(-3)).toEqual(['name', 'category', 'properties']);
    expect(keys(FIXTURES.alias).slice(-3)).toEqual(['previousId', 'Previous ID', 'User ID']);
  });

  it('leaves out absent ids, times, integrations, name and category', () => {
    const sparse: IngestMessage = { ...FIXTURES.page, userId: null, sentAt: null, originalTimestamp: null, integrations: null, name: null, category: null };
    expect(keys(sparse)).toEqual(['version', 'type', 'messageId', 'anonymousId', 'timestamp', 'context', 'receivedAt', 'properties']);
  });

  it('defaults context, properties and traits to empty objects', () => {
    const bare: IngestMessage = { ...FIXTURES.identify, context: null, traits: null };
    const body = JSON.parse(render(bare).toString('utf8')) as Record<string, unknown>;
    expect(body.context).toEqual({});
    expect(body.traits).toEqual({});
    expect((JSON.parse(render({ ...FIXTURES.track, properties: null }).toString('utf8')) as Record<string, unknown>).properties).toEqual({});
  });

  it('a delete carries no version and nothing beyond type, messageId, userId and timestamp', () => {
    const withExtras: IngestMessage = { ...FIXTURES.delete, context: '{"ip":"1.2.3.4"}', anonymousId: 'a', traits: '{"x":1}' };
    expect(keys(withExtras)).toEqual(['type', 'messageId', 'userId', 'timestamp']);
  });

  it('writes every time as ISO-8601 UTC with milliseconds', () => {
    const body = JSON.parse(render({ ...FIXTURES.track, timestamp: 0, receivedAt: 1, sentAt: -1 }).toString('utf8')) as Record<string, unknown>;
    expect(body.timestamp).toBe('1970-01-01T00:00:00.000Z');
    expect(body.receivedAt).toBe('1970-01-01T00:00:00.001Z');
    expect(body.sentAt).toBe('1969-12-31T23:59:59.999Z');
  });

  it('re-serialises free-form text from direct producers (spacing, escapes) canonically', () => {
    const body = render({ ...FIXTURES.track, properties: '{ "a" : 1.0, "b": "\\u00e9", "c": 1e2 }' }).toString('utf8');
    expect(body).toContain('"properties":{"a":1,"b":"é","c":100}');
  });

  it('turns an integer beyond 2^53 into the double a JavaScript receiver would read, stably', () => {
    const body = render({ ...FIXTURES.track, properties: '{"id":9007199254740993,"big":123456789012345678901234567890}' }).toString('utf8');
    expect(body).toContain('"properties":{"id":9007199254740992,"big":1.2345678901234568e+29}');
    expect(JSON.stringify(JSON.parse(body))).toBe(body);
  });
});

describe('the round-trip property', () => {
  // Objects from arbitrary JSON text: unicode (including lone surrogates), escapes, big
  // and negative numbers, -0, integer-like keys, nesting.
  const jsonObject = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ depthSize: 'small' }), { maxKeys: 6 });
  const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));
  const nullableText = fc.option(text, { nil: null });
  const time = fc.integer({ min: -8.64e15, max: 8.64e15 });
  const message = fc.record({
    messageId: text.filter((value) => value !== ''),
    type: fc.constantFrom(...MESSAGE_TYPES),
    userId: nullableText,
    anonymousId: nullableText,
    timestamp: time,
    receivedAt: time,
    sentAt: fc.option(time, { nil: null }),
    originalTimestamp: fc.option(time, { nil: null }),
    event: nullableText,
    name: nullableText,
    category: nullableText,
    groupId: nullableText,
    previousId: nullableText,
    properties: fc.option(jsonObject.map((value) => JSON.stringify(value)), { nil: null }),
    traits: fc.option(jsonObject.map((value) => JSON.stringify(value)), { nil: null }),
    context: fc.option(jsonObject.map((value) => JSON.stringify(value)), { nil: null }),
    integrations: fc.option(jsonObject.map((value) => JSON.stringify(value)), { nil: null }),
  });

  it('JSON.stringify(JSON.parse(body)) === body, and the bytes are its UTF-8', () => {
    fc.assert(
      fc.property(message, (fields) => {
        const body = render({ ...fields, sourceId: 'web' });
        const textBody = body.toString('utf8');
        expect(JSON.stringify(JSON.parse(textBody))).toBe(textBody);
        expect(Buffer.from(textBody, 'utf8').equals(body)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
