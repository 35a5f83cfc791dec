import { describe, expect, it } from 'vitest';
import type { TailMessage } from './api';
import { mergeNewest, messageLabel, whoOf } from './tail';

function message(messageId: string, sourceId = 'web'): TailMessage {
  return { sourceId, messageId, type: 'track', userId: 'u-1', anonymousId: null, event: 'Signed Up', receivedAt: '2026-11-25T10:00:00.000Z', message: {} };
}

describe('mergeNewest', () => {
  it('puts the newest poll on top and shows a message once', () => {
    const shown = [message('m-2'), message('m-1')];
    const merged = mergeNewest(shown, [message('m-4'), message('m-3'), message('m-2')]);
    expect(merged.map((m) => m.messageId)).toEqual(['m-4', 'm-3', 'm-2', 'm-1']);
  });

  it('tells apart equal message ids of different sources', () => {
    expect(mergeNewest([message('m-1', 'web')], [message('m-1', 'ios')])).toHaveLength(2);
  });

  it('keeps at most the newest `max`', () => {
    const merged = mergeNewest([message('m-1'), message('m-0')], [message('m-3'), message('m-2')], 3);
    expect(merged.map((m) => m.messageId)).toEqual(['m-3', 'm-2', 'm-1']);
  });
});

describe('row labels', () => {
  it('names a message by event, then page or screen name, then type', () => {
    expect(messageLabel({ type: 'track', event: 'Signed Up', message: {} })).toBe('Signed Up');
    expect(messageLabel({ type: 'page', event: null, message: { name: 'Pricing' } })).toBe('Pricing');
    expect(messageLabel({ type: 'identify', event: null, message: { traits: {} } })).toBe('identify');
    expect(messageLabel({ type: 'identify', event: null, message: null })).toBe('identify');
  });

  it('shows the userId, else the anonymousId', () => {
    expect(whoOf({ userId: 'u-1', anonymousId: 'a-1' })).toBe('u-1');
    expect(whoOf({ userId: null, anonymousId: 'a-1' })).toBe('anon a-1');
    expect(whoOf({ userId: null, anonymousId: null })).toBe('—');
  });
});
