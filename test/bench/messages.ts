/**
 * The load: `/v1/batch` requests of Track calls shaped like a web shop's (about 500 bytes of
 * JSON each, as analytics.js or analytics-node send them). Every message carries its
 * sequence number in its messageId and, in `properties`, the time its request was sent
 * (`sentAtMs`, epoch milliseconds with fractions) and the phase it belongs to, which the
 * receiver reads back from the webhook body.
 */

export const BATCH_SIZE = 100;
/** Distinct visitors: the ingest key, so messages spread over every partition. */
const VISITORS = 5000;
const MESSAGE_ID_PREFIX = 'm-';

export function messageId(seq: number): string {
  return `${MESSAGE_ID_PREFIX}${seq}`;
}

/** The sequence number in a messageId of ours, or undefined for anything else. */
export function sequenceOf(id: unknown): number | undefined {
  if (typeof id !== 'string' || !id.startsWith(MESSAGE_ID_PREFIX)) return undefined;
  const seq = Number(id.slice(MESSAGE_ID_PREFIX.length));
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes on one host. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The body of batch number `batch`: messages `batch * size` … `+ size - 1`.
 * Built as text (no object graph) because the generator must stay cheap next to the
 * pipeline it measures.
 */
export function batchBody(batch: number, sentAtMs: number, phase: string, size = BATCH_SIZE): string {
  const timestamp = new Date(sentAtMs).toISOString();
  const sentAt = sentAtMs.toFixed(3);
  const parts: string[] = new Array(size);
  for (let n = 0; n < size; n++) {
    const seq = batch * size + n;
    const visitor = seq % VISITORS;
    parts[n] =
      `{"type":"track","messageId":"${messageId(seq)}","anonymousId":"anon-${visitor}","userId":"user-${visitor}",` +
      `"event":"Order Completed","timestamp":"${timestamp}",` +
      `"properties":{"sentAtMs":${sentAt},"phase":"${phase}","orderId":"o-${seq}","revenue":42.5,"currency":"EUR","items":3,"coupon":"SPRING"},` +
      `"context":{"library":{"name":"tributary-bench","version":"1.0.0"},"ip":"203.0.113.9","locale":"en-US",` +
      `"userAgent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",` +
      `"page":{"path":"/checkout","url":"https://shop.example.com/checkout","referrer":"https://shop.example.com/cart"}}}`;
  }
  return `{"batch":[${parts.join(',')}],"sentAt":"${timestamp}"}`;
}

/** What the receiver needs from a webhook body. */
export interface Arrival {
  seq: number | undefined;
  sentAtMs: number | undefined;
  phase: string | undefined;
}

export function readArrival(body: string): Arrival {
  const parsed = JSON.parse(body) as { messageId?: unknown; properties?: { sentAtMs?: unknown; phase?: unknown } };
  const sentAtMs = parsed.properties?.sentAtMs;
  const phase = parsed.properties?.phase;
  return {
    seq: sequenceOf(parsed.messageId),
    sentAtMs: typeof sentAtMs === 'number' ? sentAtMs : undefined,
    phase: typeof phase === 'string' ? phase : undefined,
  };
}
