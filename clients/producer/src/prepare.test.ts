import { describe, expect, it } from 'vitest';
import type { Source } from '@tributary/schemas';
import { MAX_JSON_DEPTH } from '@tributary/shared';
import { MAX_REQUEST_BYTES } from '@tributary/shared/segment';
import { prepareMessages } from './prepare.js';

const source: Source = { id: 'web', name: 'Web', writeKey: 'wk', enabled: true };
let ids = 0;
const receipt = { source, receivedAt: Date.parse('2026-11-24T10:00:00Z'), newMessageId: () => `generated-${++ids}` };

const refusal = (body: object, kind: Parameters<typeof prepareMessages>[1]) => {
  const result = prepareMessages(body, kind, receipt);
  if (result.ok) throw new Error('expected a refusal');
  return result.error;
};

describe('prepareMessages', () => {
  it('writes a call as the HTTP API would store it: Dates as ISO time, the source, a generated id, keyed by anonymousId else userId', () => {
    const result = prepareMessages(
      { userId: 'u1', event: 'Signed Up', timestamp: new Date('2026-11-24T09:59:00Z'), properties: { plan: 'pro', skipped: undefined } },
      'track',
      receipt,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [{ message, key }] = result.messages as [(typeof result.messages)[0]];
    expect(key).toBe('u1');
    expect(message).toMatchObject({
      type: 'track',
      sourceId: 'web',
      userId: 'u1',
      event: 'Signed Up',
      originalTimestamp: Date.parse('2026-11-24T09:59:00Z'),
      receivedAt: receipt.receivedAt,
      properties: '{"plan":"pro"}',
    });
    expect(message.messageId).toMatch(/^generated-/);
  });

  it("merges a batch's context under each message's own, and keeps the caller's messageIds", () => {
    const result = prepareMessages(
      {
        batch: [
          { type: 'identify', messageId: 'm1', anonymousId: 'a1', userId: 'u1', traits: { name: 'Ada' }, context: { locale: 'en' } },
          { type: 'alias', messageId: 'm2', userId: 'u1', previousId: 'a1' },
        ],
        context: { library: { name: 'app' }, locale: 'fr' },
      },
      'batch',
      receipt,
    );
    expect(result.ok && result.messages.map(({ message, key }) => [message.messageId, key, message.context])).toEqual([
      ['m1', 'a1', '{"library":{"name":"app"},"locale":"en"}'],
      ['m2', 'u1', '{"library":{"name":"app"},"locale":"fr"}'],
    ]);
  });

  it('refuses the whole batch for one invalid message, naming it, as the HTTP API answers', () => {
    const error = refusal({ batch: [{ type: 'track', userId: 'u', event: 'ok' }, { type: 'track', userId: 'u' }] }, 'batch');
    expect(error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(JSON.stringify(error.details)).toContain('"index":1');
  });

  it('refuses an id past its length limit', () => {
    expect(refusal({ userId: 'u', event: 'e', messageId: 'x'.repeat(30_000) }, 'track')).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('refuses a batch whose shared context would be copied past the per-message limit', () => {
    const context = { blob: 'c'.repeat(40_000) };
    expect(refusal({ batch: [{ type: 'track', userId: 'u', event: 'e' }], context }, 'batch')).toMatchObject({ code: 'message_too_large' });
  });

  it('refuses a call larger than the request limit, and one nested deeper than allowed, before validating', () => {
    const batch = Array.from({ length: 40 }, () => ({ type: 'track', userId: 'u', event: 'e', properties: { text: 'p'.repeat(15_000) } }));
    expect(refusal({ batch }, 'batch')).toMatchObject({ code: 'request_too_large', details: { limit: MAX_REQUEST_BYTES } });
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < MAX_JSON_DEPTH + 5; level++) deep = { deeper: deep };
    expect(refusal({ userId: 'u', event: 'e', properties: deep }, 'track')).toMatchObject({ code: 'too_deep' });
  });

  it('refuses what cannot be JSON', () => {
    const cyclic: Record<string, unknown> = { userId: 'u', event: 'e' };
    cyclic.properties = cyclic;
    expect(refusal(cyclic, 'track')).toMatchObject({ status: 400, code: 'invalid_json' });
  });
});
