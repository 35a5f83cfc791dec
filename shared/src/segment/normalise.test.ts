import { describe, expect, it } from 'vitest';
import { recordKey, toIngestMessage, type Receipt } from './normalise.js';
import { validateRequest, type CallKind, type ValidRequest } from './validation.js';

const receivedAt = Date.parse('2024-03-01T10:00:00.000Z');
const receipt: Receipt = { sourceId: 'web', receivedAt, newMessageId: () => 'generated-id' };

function valid(body: unknown, kind: CallKind = 'batch'): ValidRequest {
  const result = validateRequest(body, kind);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.request;
}

function normalised(body: unknown, kind: CallKind = 'batch') {
  const { envelope, messages } = valid(body, kind);
  return messages.map((message) => toIngestMessage(message, envelope, receipt));
}

describe('toIngestMessage', () => {
  it('builds the record of an analytics-go v2 batch', () => {
    // What analytics-go v2.1 puts on the wire: batch-level context, messageId and sentAt
    // (strftime %z), per-message type, messageId and timestamp, Page traits as properties.
    const [page, track] = normalised({
      context: { library: { name: 'analytics-go', version: '2.1.1' } },
      messageId: 'batch-id',
      sentAt: '2024-03-01T10:00:00+0000',
      batch: [
        {
          type: 'page',
          messageId: 'm-1',
          timestamp: '2024-03-01T09:59:58+0000',
          userId: 'u1',
          category: 'Docs',
          name: 'Install',
          properties: { url: 'https://example.com/docs', title: 'Install', referrer: '', path: '/docs' },
          integrations: { All: true, Webhooks: false },
          context: { ip: '203.0.113.9' },
        },
        { type: 'track', messageId: 'm-2', timestamp: '2024-03-01T09:59:59+0000', anonymousId: 'anon-1', event: 'Clicked', properties: { n: 1 } },
      ],
    });
    expect(page).toEqual({
      messageId: 'm-1',
      type: 'page',
      sourceId: 'web',
      userId: 'u1',
      anonymousId: null,
      timestamp: Date.parse('2024-03-01T09:59:58Z'),
      originalTimestamp: Date.parse('2024-03-01T09:59:58Z'),
      sentAt: Date.parse('2024-03-01T10:00:00Z'),
      receivedAt,
      event: null,
      name: 'Install',
      category: 'Docs',
      groupId: null,
      previousId: null,
      properties: '{"url":"https://example.com/docs","title":"Install","referrer":"","path":"/docs"}',
      traits: null,
      context: '{"library":{"name":"analytics-go","version":"2.1.1"},"ip":"203.0.113.9"}',
      integrations: '{"All":true,"Webhooks":false}',
    });
    expect(track).toMatchObject({ messageId: 'm-2', type: 'track', anonymousId: 'anon-1', event: 'Clicked', properties: '{"n":1}' });
    expect(JSON.parse(track!.context!)).toEqual({ library: { name: 'analytics-go', version: '2.1.1' } });
  });

  it('generates a messageId when the client sent none', () => {
    const [message] = normalised({ userId: 'u', event: 'e' }, 'track');
    expect(message!.messageId).toBe('generated-id');
  });

  it('stamps the receipt time when no timestamp was sent', () => {
    const [message] = normalised({ userId: 'u', event: 'e' }, 'track');
    expect(message).toMatchObject({ timestamp: receivedAt, originalTimestamp: null, sentAt: null, receivedAt });
  });

  it('keeps a historical timestamp without sentAt exactly', () => {
    const [message] = normalised({ userId: 'u', event: 'e', timestamp: '2015-06-01T12:00:00.123Z' }, 'track');
    expect(message).toMatchObject({ timestamp: Date.parse('2015-06-01T12:00:00.123Z'), originalTimestamp: Date.parse('2015-06-01T12:00:00.123Z') });
  });

  it('corrects a skewed clock using the batch sentAt, and prefers the message sentAt', () => {
    const [fromBatch, fromMessage] = normalised({
      sentAt: '2024-03-01T09:00:00.000Z', // an hour behind
      batch: [
        { type: 'track', userId: 'u', event: 'e', timestamp: '2024-03-01T08:59:50.000Z' },
        { type: 'track', userId: 'u', event: 'e', timestamp: '2024-03-01T08:59:50.000Z', sentAt: '2024-03-01T08:59:55.000Z' },
      ],
    });
    expect(fromBatch).toMatchObject({ timestamp: receivedAt - 10_000, sentAt: Date.parse('2024-03-01T09:00:00Z') });
    expect(fromMessage).toMatchObject({ timestamp: receivedAt - 5_000, sentAt: Date.parse('2024-03-01T08:59:55Z') });
    expect(fromMessage!.originalTimestamp).toBe(Date.parse('2024-03-01T08:59:50Z'));
  });

  it('takes integrations from context.integrations and leaves the context as sent', () => {
    const [message] = normalised({ userId: 'u', event: 'e', context: { integrations: { Webhooks: false }, locale: 'de' } }, 'track');
    expect(message!.integrations).toBe('{"Webhooks":false}');
    expect(JSON.parse(message!.context!)).toEqual({ integrations: { Webhooks: false }, locale: 'de' });
  });

  it('merges batch context.integrations, message context.integrations and top-level integrations', () => {
    const [message] = normalised({
      context: { integrations: { All: false } },
      batch: [{ type: 'track', userId: 'u', event: 'e', context: { integrations: { Webhooks: false } }, integrations: { Webhooks: true } }],
    });
    expect(JSON.parse(message!.integrations!)).toEqual({ All: false, Webhooks: true });
  });

  it("applies a batch's integrations to every message of it, under the message's own", () => {
    const [plain, own, inContext] = normalised({
      integrations: { All: false, Webhooks: { signing: 'v1' } },
      batch: [
        { type: 'track', userId: 'u', event: 'e' },
        { type: 'track', userId: 'u', event: 'e', integrations: { All: true, Webhooks: { retries: 3 } } },
        { type: 'track', userId: 'u', event: 'e', context: { integrations: { All: true } } },
      ],
    });
    expect(JSON.parse(plain!.integrations!)).toEqual({ All: false, Webhooks: { signing: 'v1' } });
    // The message wins key by key; destination options merge as the context does.
    expect(JSON.parse(own!.integrations!)).toEqual({ All: true, Webhooks: { signing: 'v1', retries: 3 } });
    expect(JSON.parse(inContext!.integrations!)).toEqual({ All: true, Webhooks: { signing: 'v1' } });
    // The batch's integrations are not written into the context.
    expect(plain!.context).toBeNull();
  });

  it("takes a batch's top-level integrations over its context.integrations, as for a message", () => {
    const [message] = normalised({
      context: { integrations: { Webhooks: true, Mixpanel: false } },
      integrations: { Webhooks: false },
      batch: [{ type: 'track', userId: 'u', event: 'e' }],
    });
    expect(JSON.parse(message!.integrations!)).toEqual({ Webhooks: false, Mixpanel: false });
  });

  it('keeps a page name in properties.name as sent, and the top-level name in name', () => {
    const [withTop, onlyInProperties] = normalised({
      batch: [
        { type: 'page', userId: 'u', name: 'Home', properties: { name: 'Home', url: 'https://example.com' } },
        { type: 'screen', userId: 'u', properties: { name: 'Settings' } },
      ],
    });
    expect(withTop).toMatchObject({ name: 'Home', properties: '{"name":"Home","url":"https://example.com"}' });
    expect(onlyInProperties).toMatchObject({ name: null, properties: '{"name":"Settings"}' });
  });

  it('stores identify and group traits, alias previousId, group groupId', () => {
    const [identify, group, alias] = normalised({
      batch: [
        { type: 'identify', userId: 'u', traits: { email: 'a@example.com' } },
        { type: 'group', userId: 'u', groupId: 'g1', traits: { plan: 'pro' } },
        { type: 'alias', userId: 'u', previousId: 'anon-1' },
      ],
    });
    expect(identify).toMatchObject({ traits: '{"email":"a@example.com"}', properties: null });
    expect(group).toMatchObject({ groupId: 'g1', traits: '{"plan":"pro"}' });
    expect(alias).toMatchObject({ previousId: 'anon-1', userId: 'u', context: null, integrations: null });
  });
});

describe('toIngestMessage: context.ip', () => {
  const fromAddress = (body: unknown, kind: CallKind = 'batch', ip = '198.51.100.4') => {
    const { envelope, messages } = valid(body, kind);
    return messages.map((message) => toIngestMessage(message, envelope, { ...receipt, ip }));
  };

  it("stores the request's address as context.ip when the client sent none, as hosted Segment does", () => {
    const [bare] = fromAddress({ anonymousId: 'a', event: 'e' }, 'track');
    expect(JSON.parse(bare!.context!)).toEqual({ ip: '198.51.100.4' });
    const [withContext] = fromAddress({ anonymousId: 'a', event: 'e', context: { library: { name: 'analytics.js' } } }, 'track');
    expect(JSON.parse(withContext!.context!)).toEqual({ library: { name: 'analytics.js' }, ip: '198.51.100.4' });
  });

  it('never overwrites an ip the client sent, in the message or the batch, whatever its value', () => {
    const messages = fromAddress({
      context: { ip: '203.0.113.1' },
      batch: [
        { type: 'track', userId: 'u', event: 'batch ip' },
        { type: 'track', userId: 'u', event: 'own ip', context: { ip: '203.0.113.2' } },
        { type: 'track', userId: 'u', event: 'opted out', context: { ip: null } },
      ],
    });
    expect(messages.map((message) => (JSON.parse(message.context!) as { ip: unknown }).ip)).toEqual(['203.0.113.1', '203.0.113.2', null]);
  });

  it("leaves the batch's shared context untouched for the messages after", () => {
    const context = { library: { name: 'analytics-go' } };
    const messages = fromAddress({ context, batch: [{ type: 'identify', userId: 'u1' }, { type: 'identify', userId: 'u2' }] });
    expect(messages.map((message) => message.context)).toEqual(Array(2).fill('{"library":{"name":"analytics-go"},"ip":"198.51.100.4"}'));
    expect(context).toEqual({ library: { name: 'analytics-go' } });
  });

  it('adds nothing without an address (@tributary/producer)', () => {
    const [message] = normalised({ anonymousId: 'a', event: 'e' }, 'track');
    expect(message!.context).toBeNull();
  });
});

describe('recordKey', () => {
  it('is the anonymousId, else the userId', () => {
    expect(recordKey({ anonymousId: 'a', userId: 'u' })).toBe('a');
    expect(recordKey({ anonymousId: null, userId: 'u' })).toBe('u');
  });
});
