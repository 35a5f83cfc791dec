import { describe, expect, it } from 'vitest';
import { BATCH_SIZE, batchBody, readArrival, sequenceOf } from './messages.js';

describe('load messages', () => {
  it('numbers the messages of batch b from b × BATCH_SIZE and carries the send time and phase', () => {
    const body = JSON.parse(batchBody(7, 1_732_190_000_123.456, 'a')) as { batch: Array<{ messageId: string; properties: { sentAtMs: number; phase: string } }> };
    expect(body.batch).toHaveLength(BATCH_SIZE);
    expect(body.batch.map((m) => sequenceOf(m.messageId))).toEqual(Array.from({ length: BATCH_SIZE }, (_, n) => 7 * BATCH_SIZE + n));
    expect(body.batch[0]!.properties).toMatchObject({ sentAtMs: 1_732_190_000_123.456, phase: 'a' });
  });

  it('makes messages of the size of a real Track call, far below ingest limits', () => {
    const size = Buffer.byteLength(batchBody(123_456, Date.now(), 'ramp-2000'));
    expect(size / BATCH_SIZE).toBeGreaterThan(400);
    expect(size / BATCH_SIZE).toBeLessThan(700);
  });

  it('reads an arrival back from a webhook body', () => {
    const webhook = JSON.stringify({ version: 1, type: 'track', messageId: 'm-42', properties: { sentAtMs: 12.5, phase: 'b' } });
    expect(readArrival(webhook)).toEqual({ seq: 42, sentAtMs: 12.5, phase: 'b' });
    expect(readArrival('{"messageId":"someone-else"}')).toEqual({ seq: undefined, sentAtMs: undefined, phase: undefined });
    expect(sequenceOf('m-1.5')).toBeUndefined();
    expect(sequenceOf(42)).toBeUndefined();
  });
});
