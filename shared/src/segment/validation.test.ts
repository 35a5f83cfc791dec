import { describe, expect, it } from 'vitest';
import {
  MAX_LISTED_ERRORS,
  MAX_MESSAGE_BYTES,
  MAX_REQUEST_BYTES,
  requestTooLarge,
  validateRequest,
  writeKeyFromBody,
  type CallKind,
  type FieldError,
  type Validation,
} from './validation.js';

function errorsOf(result: Validation): FieldError[] {
  if (result.ok) throw new Error('expected the request to be refused');
  return result.error.details?.errors as FieldError[];
}

function accepted(result: Validation) {
  if (!result.ok) throw new Error(`expected acceptance, got ${JSON.stringify(result.error)}`);
  return result.request;
}

/** A message whose JSON serialisation is exactly `bytes` long. */
function messageOfSize(bytes: number): Record<string, unknown> {
  const base = { type: 'track', event: 'Sized', userId: 'u1', properties: { pad: '' } };
  const overhead = Buffer.byteLength(JSON.stringify(base));
  return { ...base, properties: { pad: 'x'.repeat(bytes - overhead) } };
}

describe('validateRequest: the required fields of each type', () => {
  it.each<[CallKind, Record<string, unknown>]>([
    ['identify', { userId: 'u1', traits: { email: 'a@example.com' } }],
    ['identify', { anonymousId: 'anon-1' }],
    ['track', { userId: 'u1', event: 'Signed Up' }],
    ['page', { anonymousId: 'a1' }],
    ['page', { userId: 'u1', name: 'Home', category: 'Docs', properties: { url: 'https://example.com' } }],
    ['screen', { userId: 'u1', name: 'Settings' }],
    ['group', { userId: 'u1', groupId: 'g1' }],
    ['alias', { userId: 'u2', previousId: 'u1' }],
  ])('accepts a minimal %s call', (kind, body) => {
    expect(accepted(validateRequest(body, kind)).messages).toHaveLength(1);
  });

  it.each<[CallKind, Record<string, unknown>, string, string]>([
    ['identify', { traits: {} }, 'userId', 'identify needs userId or anonymousId'],
    ['track', { event: 'x' }, 'userId', 'track needs userId or anonymousId'],
    ['page', { name: 'Home' }, 'userId', 'page needs userId or anonymousId'],
    ['screen', { name: 'Home' }, 'userId', 'screen needs userId or anonymousId'],
    ['group', { groupId: 'g' }, 'userId', 'group needs userId or anonymousId'],
    ['track', { userId: 'u1' }, 'event', 'track needs event (the event name)'],
    ['track', { userId: 'u1', event: '' }, 'event', 'track needs event (the event name)'],
    ['group', { userId: 'u1' }, 'groupId', 'group needs groupId'],
    ['group', { userId: 'u1', groupId: '' }, 'groupId', 'group needs groupId'],
    ['alias', { previousId: 'u1' }, 'userId', 'alias needs userId (the new identifier)'],
    ['alias', { anonymousId: 'a', previousId: 'u1' }, 'userId', 'alias needs userId (the new identifier)'],
    ['alias', { userId: 'u2' }, 'previousId', 'alias needs previousId (the identifier aliased from)'],
  ])('refuses %s %j: %s', (kind, body, field, message) => {
    expect(errorsOf(validateRequest(body, kind))).toEqual([{ index: 0, messageId: null, field, message }]);
  });

  it('treats empty ids as missing and takes numeric ids as text', () => {
    expect(errorsOf(validateRequest({ userId: '', anonymousId: '', event: 'x' }, 'track'))[0]!.field).toBe('userId');
    const request = accepted(validateRequest({ userId: 42, groupId: 7, messageId: 99 }, 'group'));
    expect(request.messages[0]).toMatchObject({ userId: '42', groupId: '7', messageId: '99' });
  });

  it('refuses ids, names and objects of the wrong JSON type', () => {
    const errors = errorsOf(
      validateRequest(
        { userId: { id: 1 }, anonymousId: 'a', event: 5, name: [], properties: 'p', traits: [1], context: 3, integrations: true },
        'track',
      ),
    );
    expect(errors.map((error) => [error.field, error.message])).toEqual([
      ['userId', 'userId must be a string'],
      ['event', 'event must be a string'],
      ['name', 'name must be a string'],
      ['properties', 'properties must be a JSON object'],
      ['traits', 'traits must be a JSON object'],
      ['context', 'context must be a JSON object'],
      ['integrations', 'integrations must be a JSON object'],
    ]);
  });

  it('reads null as absent', () => {
    const message = accepted(validateRequest({ userId: 'u', event: 'e', properties: null, timestamp: null, name: null }, 'track')).messages[0]!;
    expect(message).toMatchObject({ properties: undefined, timestamp: null, name: null });
  });
});

describe('validateRequest: types and routes', () => {
  it('takes a single call’s type from the route and accepts a matching body type', () => {
    expect(accepted(validateRequest({ userId: 'u', event: 'e' }, 'track')).messages[0]!.type).toBe('track');
    expect(accepted(validateRequest({ type: 'track', userId: 'u', event: 'e' }, 'track')).messages[0]!.type).toBe('track');
  });

  it('refuses a body type that disagrees with the route', () => {
    expect(errorsOf(validateRequest({ type: 'identify', userId: 'u', event: 'e' }, 'track'))).toEqual([
      {
        index: 0,
        messageId: null,
        field: 'type',
        message: 'type "identify" does not match the /v1/track endpoint; omit it or send "track"',
      },
    ]);
  });

  it('needs a type on every batch item', () => {
    const errors = errorsOf(validateRequest({ batch: [{ userId: 'u', event: 'e', messageId: 'm-1' }] }, 'batch'));
    expect(errors).toEqual([
      { index: 0, messageId: 'm-1', field: 'type', message: 'type is required in a batch: one of identify, track, page, screen, group, alias' },
    ]);
  });

  it('refuses unknown types and delete', () => {
    const errors = errorsOf(
      validateRequest(
        {
          batch: [
            { type: 'purchase', userId: 'u' },
            { type: 'delete', userId: 'u' },
            { type: 'Track', userId: 'u', event: 'e' },
          ],
        },
        'batch',
      ),
    );
    expect(errors.map((error) => [error.index, error.message])).toEqual([
      [0, 'type "purchase" is not accepted: use one of identify, track, page, screen, group, alias'],
      [1, 'type "delete" is not accepted: deletions go through the admin API, not the tracking API'],
      [2, 'type "Track" is not accepted: use one of identify, track, page, screen, group, alias'],
    ]);
  });

  it('accepts a batch mixing every type', () => {
    const request = accepted(
      validateRequest(
        {
          batch: [
            { type: 'identify', userId: 'u' },
            { type: 'track', userId: 'u', event: 'e' },
            { type: 'page', userId: 'u' },
            { type: 'screen', anonymousId: 'a' },
            { type: 'group', userId: 'u', groupId: 'g' },
            { type: 'alias', userId: 'u', previousId: 'a' },
          ],
        },
        'batch',
      ),
    );
    expect(request.messages.map((message) => message.type)).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias']);
  });

  it('refuses the whole batch for one bad message and names it by index and messageId', () => {
    const result = validateRequest(
      {
        batch: [
          { type: 'track', userId: 'u', event: 'ok' },
          { type: 'track', userId: 'u', event: 'ok' },
          { type: 'track', userId: 'u', event: 'ok' },
          { type: 'track', userId: 'u', messageId: 'abc' },
        ],
      },
      'batch',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({
      status: 400,
      code: 'validation_failed',
      error: 'message 3: track needs event (the event name); nothing in this request was accepted',
      details: { errors: [{ index: 3, messageId: 'abc', field: 'event', message: 'track needs event (the event name)' }], errorCount: 1 },
    });
  });

  it('lists the first MAX_LISTED_ERRORS problems of a batch of thousands and says how many more there were', () => {
    const batch = Array.from({ length: 20_000 }, () => ({}));
    const result = validateRequest({ batch }, 'batch');
    if (result.ok) throw new Error('expected refusal');
    expect(result.error.error).toBe(
      'message 0: type is required in a batch: one of identify, track, page, screen, group, alias (and 19999 more problems); nothing in this request was accepted',
    );
    expect(result.error.details?.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect((result.error.details?.errors as FieldError[]).at(-1)!.index).toBe(MAX_LISTED_ERRORS - 1);
    expect(result.error.details?.errorCount).toBe(20_000);
  });

  it('lists at most MAX_LISTED_ERRORS problems but counts them all', () => {
    const batch = Array.from({ length: MAX_LISTED_ERRORS + 20 }, () => ({ type: 'track', userId: 'u' }));
    const result = validateRequest({ batch }, 'batch');
    if (result.ok) throw new Error('expected refusal');
    expect(result.error.details?.errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(result.error.details?.errorCount).toBe(MAX_LISTED_ERRORS + 20);
  });
});

describe('validateRequest: batch shape', () => {
  it('refuses a body that is not an object', () => {
    for (const body of [[], 'x', 3, null]) {
      const result = validateRequest(body, 'batch');
      expect(result.ok ? undefined : result.error.code).toBe('invalid_body');
    }
  });

  it('refuses a missing, non-array or empty batch', () => {
    expect(errorsOf(validateRequest({}, 'batch'))).toEqual([{ index: null, messageId: null, field: 'batch', message: 'batch must be an array of messages' }]);
    expect(errorsOf(validateRequest({ batch: {} }, 'batch'))[0]!.message).toBe('batch must be an array of messages');
    expect(errorsOf(validateRequest({ batch: [] }, 'batch'))[0]!.message).toBe('batch must contain at least one message');
  });

  it('refuses batch items that are not objects', () => {
    expect(errorsOf(validateRequest({ batch: ['track', null] }, 'batch'))).toEqual([
      { index: 0, messageId: null, field: null, message: 'each message must be a JSON object' },
      { index: 1, messageId: null, field: null, message: 'each message must be a JSON object' },
    ]);
  });

  it('reads the batch envelope: context and sentAt', () => {
    const request = accepted(
      validateRequest({ batch: [{ type: 'identify', userId: 'u' }], context: { library: { name: 'analytics-go' } }, sentAt: '2024-03-01T10:00:00+0000' }, 'batch'),
    );
    expect(request.envelope).toEqual({ context: { library: { name: 'analytics-go' } }, sentAt: Date.parse('2024-03-01T10:00:00Z') });
  });

  it("reads the batch's integrations, which apply to each of its messages", () => {
    const request = accepted(validateRequest({ batch: [{ type: 'identify', userId: 'u' }], integrations: { All: false, Webhooks: true } }, 'batch'));
    expect(request.envelope).toEqual({ context: undefined, integrations: { All: false, Webhooks: true }, sentAt: null });
    // A single call's integrations are its message's own.
    expect(accepted(validateRequest({ userId: 'u', integrations: { All: false } }, 'identify')).envelope.integrations).toBeUndefined();
  });

  it('refuses batch-level integrations that are not an object', () => {
    expect(errorsOf(validateRequest({ batch: [{ type: 'identify', userId: 'u' }], integrations: ['Webhooks'] }, 'batch'))).toEqual([
      { index: null, messageId: null, field: 'integrations', message: 'integrations must be a JSON object' },
    ]);
  });

  it('refuses a bad batch-level sentAt or context', () => {
    const errors = errorsOf(validateRequest({ batch: [{ type: 'identify', userId: 'u' }], sentAt: 'now', context: [] }, 'batch'));
    expect(errors).toEqual([
      { index: null, messageId: null, field: 'context', message: 'context must be a JSON object' },
      {
        index: null,
        messageId: null,
        field: 'sentAt',
        message: 'sentAt "now" is not an ISO-8601 date-time (e.g. 2024-03-01T10:00:00.000Z or 2024-03-01T10:00:00+0000)',
      },
    ]);
  });
});

describe('validateRequest: timestamps', () => {
  it('reads message timestamps in every client form', () => {
    const request = accepted(
      validateRequest(
        {
          batch: [
            { type: 'identify', userId: 'u', timestamp: '2006-01-02T15:04:05-0700' },
            { type: 'identify', userId: 'u', timestamp: '2006-01-02T22:04:05.000Z', sentAt: '2006-01-02T22:04:06.123456+00:00' },
          ],
        },
        'batch',
      ),
    );
    expect(request.messages.map((message) => [message.timestamp, message.sentAt])).toEqual([
      [Date.parse('2006-01-02T22:04:05Z'), null],
      [Date.parse('2006-01-02T22:04:05Z'), Date.parse('2006-01-02T22:04:06.123Z')],
    ]);
  });

  it('refuses an unreadable timestamp, naming the field', () => {
    expect(errorsOf(validateRequest({ userId: 'u', timestamp: 'tomorrow' }, 'identify'))).toEqual([
      {
        index: 0,
        messageId: null,
        field: 'timestamp',
        message: 'timestamp "tomorrow" is not an ISO-8601 date-time (e.g. 2024-03-01T10:00:00.000Z or 2024-03-01T10:00:00+0000)',
      },
    ]);
    expect(errorsOf(validateRequest({ userId: 'u', timestamp: 1709287200000 }, 'identify'))[0]!.field).toBe('timestamp');
    expect(errorsOf(validateRequest({ userId: 'u', sentAt: '2024-02-30T00:00:00Z' }, 'identify'))[0]!.field).toBe('sentAt');
  });
});

describe('validateRequest: size limits', () => {
  it('accepts a message of exactly 32768 bytes and refuses one of 32769', () => {
    const atLimit = messageOfSize(MAX_MESSAGE_BYTES);
    expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(32768);
    expect(validateRequest({ batch: [atLimit] }, 'batch').ok).toBe(true);

    const overMessage = messageOfSize(MAX_MESSAGE_BYTES + 1);
    expect(Buffer.byteLength(JSON.stringify(overMessage))).toBe(32769);
    const result = validateRequest({ batch: [atLimit, overMessage] }, 'batch');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toEqual({
      status: 400,
      code: 'message_too_large',
      error: 'a message is larger than the limit of 32768 bytes (32 KB) per message',
      details: {
        limit: 32768,
        errors: [{ index: 1, messageId: null, field: null, message: 'message 1 is 32769 bytes; the limit is 32768 bytes per message' }],
      },
    });
  });

  it("counts the batch's integrations, merged into each message, against the message and request limits", () => {
    const message = messageOfSize(MAX_MESSAGE_BYTES - 100);
    expect(validateRequest({ batch: [message], integrations: { pad: 'i'.repeat(50) } }, 'batch').ok).toBe(true);
    const result = validateRequest({ batch: [message], integrations: { pad: 'i'.repeat(200) }, context: { a: 1 } }, 'batch');
    if (result.ok) throw new Error('expected refusal');
    expect(result.error).toMatchObject({
      code: 'message_too_large',
      error: "a message is larger than the limit of 32768 bytes (32 KB) per message, counting the batch's context and integrations merged into each message",
    });
    const many = Array.from({ length: 400 }, () => ({ type: 'track', userId: 'u', event: 'e' }));
    const expanded = validateRequest({ batch: many, integrations: { pad: 'i'.repeat(6_000) } }, 'batch');
    expect(expanded.ok ? undefined : expanded.error.error).toMatch(/^the request would be written as \d+ bytes once the batch's integrations \(6010 bytes\) is merged into each of its 400 messages/);
  });

  it('lists at most MAX_LISTED_ERRORS oversized messages but counts them all', () => {
    const result = validateRequest({ batch: Array.from({ length: MAX_LISTED_ERRORS + 5 }, () => ({ type: 'track', userId: 'u', event: 'e' })), context: { pad: 'c'.repeat(MAX_MESSAGE_BYTES) } }, 'batch');
    if (result.ok) throw new Error('expected refusal');
    expect(result.error.error).toBe(`${MAX_LISTED_ERRORS + 5} messages are larger than the limit of 32768 bytes (32 KB) per message, counting the batch's context merged into each message`);
    expect(result.error.details?.errors).toHaveLength(MAX_LISTED_ERRORS);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const base = messageOfSize(MAX_MESSAGE_BYTES);
    const pad = (base.properties as { pad: string }).pad;
    // 'é' is two bytes: replacing one 'x' by 'é' makes the message one byte too large.
    const multiByte = { ...base, properties: { pad: `é${pad.slice(1)}` } };
    const result = validateRequest({ batch: [multiByte] }, 'batch');
    expect(result.ok ? undefined : result.error.code).toBe('message_too_large');
  });

  it('names the messageId of an oversized message and applies the limit to single calls', () => {
    const big = { ...messageOfSize(MAX_MESSAGE_BYTES + 100), messageId: 'big-1' };
    const result = validateRequest(big, 'track');
    if (result.ok) throw new Error('expected refusal');
    expect(result.error.details?.errors).toEqual([
      { index: 0, messageId: 'big-1', field: null, message: `message 0 is ${Buffer.byteLength(JSON.stringify(big))} bytes; the limit is 32768 bytes per message` },
    ]);
  });

  it('counts what is written: the batch\'s context once per message, and every context.integrations twice', () => {
    const integrations = { Webhooks: { pad: 'i'.repeat(9_000) } };
    const context = { library: { name: 'analytics-go' }, pad: 'c'.repeat(4_000), integrations };
    const message = { type: 'track', userId: 'u', event: 'e' };
    const messageBytes = Buffer.byteLength(JSON.stringify(message));
    const contextBytes = Buffer.byteLength(JSON.stringify(context));
    const integrationsBytes = Buffer.byteLength(JSON.stringify(integrations));
    // Each message is written with the context (integrations inside it) and, again, the integrations.
    const request = accepted(validateRequest({ batch: [message, message], context }, 'batch'));
    expect(request.expandedBytes).toBe(2 * (messageBytes + contextBytes + integrationsBytes));
    // A message's own context.integrations is written twice too.
    const own = { ...message, context: { integrations } };
    expect(accepted(validateRequest(own, 'track')).expandedBytes).toBe(Buffer.byteLength(JSON.stringify(own)) + integrationsBytes);
  });

  it("refuses a batch whose context.integrations, written twice, takes it past 2 MB — though counted once it would not be", () => {
    // 150 messages × (context 4 KB + integrations 9 KB) = 1.95 MB counted once, 3.3 MB as written.
    const context = { pad: 'c'.repeat(4_000), integrations: { Webhooks: { pad: 'i'.repeat(9_000) } } };
    const batch = Array.from({ length: 150 }, () => ({ type: 'track', userId: 'u', event: 'e' }));
    const result = validateRequest({ batch, context }, 'batch');
    if (result.ok) throw new Error('expected refusal');
    expect(result.error).toMatchObject({ code: 'request_too_large', details: { limit: 2_000_000 } });
    expect(result.error.error).toMatch(/once the batch's context \(\d+ bytes, of which context.integrations' 9023 are written twice: in the context and in integrations\) is merged into each of its 150 messages/);
  });

  it('describes the request limit', () => {
    expect(requestTooLarge(MAX_REQUEST_BYTES + 1)).toEqual({
      status: 400,
      code: 'request_too_large',
      error: 'the request body is 512001 bytes (after decompression); the limit is 512000 bytes (500 KB) per request: send smaller batches',
      details: { limit: 512000 },
    });
  });
});

describe('validateRequest: what answers repeat of the input', () => {
  it('cuts each echoed messageId to 100 characters, keeping the 100 listed problems, so a large batch of long ids gets a small answer', () => {
    // What the reviewer sent: 453 KB of messages each with a 4,500-character id and no event.
    const batch = Array.from({ length: 100 }, (_, n) => ({ type: 'track', userId: 'u', messageId: `${n}-${'m'.repeat(4_500)}` }));
    const result = validateRequest({ batch }, 'batch');
    if (result.ok) throw new Error('expected refusal');
    const errors = errorsOf(result);
    expect(errors).toHaveLength(MAX_LISTED_ERRORS);
    expect(errors[0]!.messageId).toBe(`0-${'m'.repeat(98)}…(4402 more characters)`);
    expect(Buffer.byteLength(JSON.stringify(result.error))).toBeLessThan(60_000);
  });

  it('keeps a messageId of up to 100 characters whole', () => {
    const messageId = 'm'.repeat(100);
    expect(errorsOf(validateRequest({ userId: 'u', messageId }, 'track'))[0]!.messageId).toBe(messageId);
  });

  it('cuts an echoed type or timestamp value', () => {
    const [type] = errorsOf(validateRequest({ batch: [{ type: 't'.repeat(10_000), userId: 'u' }] }, 'batch'));
    expect(type!.message).toBe(`type "${'t'.repeat(99)}…(9902 more characters) is not accepted: use one of identify, track, page, screen, group, alias`);
    const [timestamp] = errorsOf(validateRequest({ userId: 'u', timestamp: 'y'.repeat(10_000) }, 'identify'));
    expect(timestamp!.message.length).toBeLessThan(250);
    expect(timestamp!.message).toMatch(/^timestamp "y+…\(9902 more characters\) is not an ISO-8601 date-time/);
  });
});

describe('writeKeyFromBody', () => {
  it('reads a non-empty string writeKey from an object body', () => {
    expect(writeKeyFromBody({ writeKey: 'wk_123456' })).toBe('wk_123456');
    expect(writeKeyFromBody({ writeKey: '' })).toBeUndefined();
    expect(writeKeyFromBody({ writeKey: 5 })).toBeUndefined();
    expect(writeKeyFromBody([{ writeKey: 'x' }])).toBeUndefined();
  });
});
