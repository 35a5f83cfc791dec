import { describe, expect, it } from 'vitest';
import { redactBody, type JsonObject } from './manifest.js';

describe('redactBody', () => {
  it('replaces the write key on the body and on each message of its batch', () => {
    const body: JsonObject = { writeKey: 'wk_secret', sentAt: 'now', batch: [{ type: 'track', writeKey: 'wk_secret' }, { type: 'page' }, 'not a message'] };
    expect(redactBody(body)).toEqual({
      writeKey: '<write key>',
      sentAt: 'now',
      batch: [{ type: 'track', writeKey: '<write key>' }, { type: 'page' }, 'not a message'],
    });
    expect(JSON.stringify(redactBody(body))).not.toContain('wk_secret');
  });

  it('replaces it on a body that is one message', () => {
    expect(redactBody({ type: 'identify', writeKey: 'wk_secret', userId: 'u-1' })).toEqual({ type: 'identify', writeKey: '<write key>', userId: 'u-1' });
  });
});
