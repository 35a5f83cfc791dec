import { describe, expect, it } from 'vitest';
import { correctedTimestamp, SKEW_TOLERANCE_MS } from './clock-skew.js';

const receivedAt = Date.parse('2024-03-01T10:00:00.000Z');

describe('correctedTimestamp', () => {
  it('is the receipt time when the client sent no timestamp', () => {
    expect(correctedTimestamp({ originalTimestamp: null, sentAt: receivedAt - 60_000, receivedAt })).toBe(receivedAt);
    expect(correctedTimestamp({ originalTimestamp: null, sentAt: null, receivedAt })).toBe(receivedAt);
  });

  it('keeps the timestamp when the client sent no sentAt', () => {
    const original = Date.parse('2020-01-01T00:00:00.000Z');
    expect(correctedTimestamp({ originalTimestamp: original, sentAt: null, receivedAt })).toBe(original);
  });

  it('moves the event by the skew of a clock that is an hour behind', () => {
    const sentAt = receivedAt - 3_600_000;
    const original = sentAt - 5_000; // happened 5 s before the send, on the device's clock
    expect(correctedTimestamp({ originalTimestamp: original, sentAt, receivedAt })).toBe(receivedAt - 5_000);
  });

  it('moves the event by the skew of a clock that is ahead', () => {
    const sentAt = receivedAt + 10 * 60_000;
    const original = sentAt - 1_000;
    expect(correctedTimestamp({ originalTimestamp: original, sentAt, receivedAt })).toBe(receivedAt - 1_000);
  });

  it('treats a difference just under the tolerance as transit: the timestamp is kept exactly', () => {
    const original = Date.parse('2015-06-01T12:00:00.000Z');
    const late = receivedAt - (SKEW_TOLERANCE_MS - 1);
    const early = receivedAt + (SKEW_TOLERANCE_MS - 1);
    expect(correctedTimestamp({ originalTimestamp: original, sentAt: late, receivedAt })).toBe(original);
    expect(correctedTimestamp({ originalTimestamp: original, sentAt: early, receivedAt })).toBe(original);
  });

  it('corrects from exactly the tolerance on, either way', () => {
    const original = Date.parse('2015-06-01T12:00:00.000Z');
    const behind = receivedAt - SKEW_TOLERANCE_MS;
    const ahead = receivedAt + SKEW_TOLERANCE_MS;
    expect(correctedTimestamp({ originalTimestamp: original, sentAt: behind, receivedAt })).toBe(original + SKEW_TOLERANCE_MS);
    expect(correctedTimestamp({ originalTimestamp: original, sentAt: ahead, receivedAt })).toBe(original - SKEW_TOLERANCE_MS);
  });

  it('keeps an exact historical import sent by a client with a correct clock', () => {
    const original = Date.parse('2015-06-01T12:00:00.000Z');
    expect(correctedTimestamp({ originalTimestamp: original, sentAt: receivedAt - 350, receivedAt })).toBe(original);
  });
});
