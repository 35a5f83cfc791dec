import { describe, expect, it } from 'vitest';
import type { IngestMessage } from '@tributary/schemas';
import { FIXTURES } from './__fixtures__/messages.js';
import { AvroDecodeError } from '@tributary/shared';
import { checkMessage, classifyDecodeError, InvalidMessage, parseFreeForm } from './message.js';

const problem = (message: IngestMessage): string | undefined => {
  try {
    checkMessage(message);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessage);
    return `${(error as InvalidMessage).reason}: ${(error as Error).message}`;
  }
};

describe('checkMessage', () => {
  it('accepts every fixture', () => {
    for (const message of Object.values(FIXTURES)) expect(problem(message)).toBeUndefined();
  });

  it.each([
    ['an empty messageId', { ...FIXTURES.track, messageId: '' }, 'missing_field: messageId is missing'],
    ['an empty sourceId', { ...FIXTURES.track, sourceId: '' }, 'missing_field: sourceId is missing'],
    ['a sourceId longer than an id may be', { ...FIXTURES.track, sourceId: 's'.repeat(513) }, 'invalid_id: sourceId is 513 characters; the limit is 512'],
    ['an unknown type', { ...FIXTURES.track, type: 'purchase' as IngestMessage['type'] }, 'missing_field: type "purchase" is not one of identify, track, page, screen, group, alias, delete'],
    ['no user or anonymous id', { ...FIXTURES.identify, userId: null, anonymousId: '' }, 'missing_field: identify needs userId or anonymousId'],
    ['a track without event', { ...FIXTURES.track, event: null }, 'missing_field: track needs event'],
    ['a group without groupId', { ...FIXTURES.group, groupId: '' }, 'missing_field: group needs groupId'],
    ['an alias without previousId', { ...FIXTURES.alias, previousId: null }, 'missing_field: alias needs previousId'],
    ['an alias with only an anonymousId', { ...FIXTURES.alias, userId: null, anonymousId: 'a' }, 'missing_field: alias needs userId'],
    ['a delete without userId', { ...FIXTURES.delete, userId: null, anonymousId: 'a' }, 'missing_field: delete needs userId'],
    ['a timestamp past what a Date holds', { ...FIXTURES.page, timestamp: 8.64e15 + 1 }, 'invalid_timestamp: timestamp is not a valid time: 8640000000000001'],
    ['a fractional receivedAt', { ...FIXTURES.page, receivedAt: 1.5 }, 'invalid_timestamp: receivedAt is not a valid time: 1.5'],
    ['a bad optional sentAt', { ...FIXTURES.page, sentAt: Number.NaN }, 'invalid_timestamp: sentAt is not a valid time: NaN'],
  ])('refuses %s', (_label, message, expected) => {
    expect(problem(message)).toBe(expected);
  });

  it('an anonymous page, screen or identify is fine', () => {
    expect(problem({ ...FIXTURES.screen, userId: null, anonymousId: 'anon' })).toBeUndefined();
  });
});

describe('parseFreeForm', () => {
  it('parses the JSON text fields and defaults context to {}', () => {
    expect(parseFreeForm({ ...FIXTURES.track, context: null })).toEqual({
      context: {},
      integrations: { All: true, Webhooks: true, Mixpanel: false },
      properties: { orderId: 'o-991', revenue: 42.5, currency: 'EUR', products: [{ sku: 'a-1', qty: 2 }], coupon: null },
      traits: null,
    });
  });

  it.each([
    ['context', { context: '{"ip":' }, /^context is not JSON: /],
    ['properties', { properties: '[1,2]' }, /^properties must be a JSON object$/],
    ['traits', { traits: '"text"' }, /^traits must be a JSON object$/],
    ['integrations', { integrations: 'null' }, /^integrations must be a JSON object$/],
  ])('refuses malformed %s as invalid_json', (_field, overrides, message) => {
    expect(() => parseFreeForm({ ...FIXTURES.track, ...overrides })).toThrow(message);
    try {
      parseFreeForm({ ...FIXTURES.track, ...overrides });
    } catch (error) {
      expect((error as InvalidMessage).reason).toBe('invalid_json');
    }
  });
});

describe('classifyDecodeError', () => {
  it('a value that can never be decoded is invalid for good, with the codec’s reason', () => {
    expect(classifyDecodeError(new AvroDecodeError('not_framed', 'not a Confluent-framed Avro value (missing magic byte 0)'))?.reason).toBe('not_framed');
    expect(classifyDecodeError(new AvroDecodeError('unknown_schema', 'schema id 32639 is not in the registry'))).toMatchObject({ reason: 'unknown_schema' });
  });

  it('any other failure (the registry unreachable) may pass: the batch is retried, nothing dropped', () => {
    expect(classifyDecodeError(Object.assign(new Error('connect ECONNREFUSED'), { status: 503 }))).toBeUndefined();
    expect(classifyDecodeError(new Error('socket hang up'))).toBeUndefined();
  });
});

describe('limits', () => {
  it('refuses ids longer than ingest accepts and free-form fields nested too deep', () => {
    expect(() => checkMessage({ ...FIXTURES.track, messageId: 'm'.repeat(30_000) })).toThrow(/messageId is 30000 characters; the limit is 100/);
    expect(() => checkMessage({ ...FIXTURES.track, userId: 'u'.repeat(600) })).toThrow(/userId is 600 characters/);
    const deep = `${'{"n":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    expect(() => parseFreeForm({ ...FIXTURES.track, properties: deep })).toThrow(expect.objectContaining({ reason: 'too_deep' }) as unknown as Error);
  });
});
