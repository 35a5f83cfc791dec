/**
 * Properties of ingest's validation and normalisation over generated input (fast-check):
 * whatever arrives, the answer is a decision, never an exception; what is refused is
 * refused with a 4xx that says why; what is accepted is stored as the client sent it, keyed
 * so one user's calls stay in order, within the limits, and encodes to the ingest schema.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { avroType, type IngestMessage } from '@tributary/schemas';
import { MAX_ID_LENGTH, MAX_MESSAGE_ID_LENGTH } from '../limits.js';
import { isJsonObject, type JsonObject } from './json-objects.js';
import { recordKey, toIngestMessage } from './normalise.js';
import { parseJsonBody } from './json-body.js';
import { MAX_MESSAGE_BYTES, validateRequest, type CallKind } from './validation.js';

const ingestType = avroType('ingest');
const RECEIVED_AT = Date.parse('2026-11-24T10:00:00.000Z');
let serial = 0;
const receipt = { sourceId: 'web', receivedAt: RECEIVED_AT, newMessageId: () => `generated-${serial++}` };

const kinds: CallKind[] = ['batch', 'identify', 'track', 'page', 'screen', 'group', 'alias'];

const id = fc.string({ minLength: 1, maxLength: 40 });
const isoTime = fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') }).map((ms) => new Date(ms).toISOString());
const freeForm = fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }) as fc.Arbitrary<JsonObject>;

/** A message every Segment library could send, of one type. */
const validMessage = fc
  .record({
    type: fc.constantFrom('identify', 'track', 'page', 'screen', 'group', 'alias'),
    messageId: fc.option(id, { nil: undefined }),
    userId: fc.option(id, { nil: undefined }),
    anonymousId: fc.option(id, { nil: undefined }),
    timestamp: fc.option(isoTime, { nil: undefined }),
    properties: fc.option(freeForm, { nil: undefined }),
    traits: fc.option(freeForm, { nil: undefined }),
    context: fc.option(freeForm, { nil: undefined }),
    event: id,
    groupId: id,
    previousId: id,
    fallbackUserId: id,
  })
  .map(({ type, event, groupId, previousId, fallbackUserId, ...rest }) => {
    const message: JsonObject = { type };
    for (const [key, value] of Object.entries(rest)) if (value !== undefined) message[key] = value;
    if (message.userId === undefined && (message.anonymousId === undefined || type === 'alias')) message.userId = fallbackUserId;
    if (type === 'track') message.event = event;
    if (type === 'group') message.groupId = groupId;
    if (type === 'alias') message.previousId = previousId;
    return message;
  });

/** Whether every leaf of `part` is in `whole` at the same place (objects compared key by key). */
function containsDeep(whole: JsonObject, part: JsonObject): boolean {
  return Object.entries(part).every(([key, value]) => {
    const there = whole[key];
    if (isJsonObject(value) && isJsonObject(there)) return containsDeep(there, value);
    return JSON.stringify(there) === JSON.stringify(value);
  });
}

describe('validateRequest (property)', () => {
  it('answers any JSON value with a decision, never an exception; a refusal is a 4xx with a code and a sentence', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.constantFrom(...kinds), (body, kind) => {
        const result = validateRequest(body, kind);
        if (!result.ok) {
          expect(result.error.status).toBeGreaterThanOrEqual(400);
          expect(result.error.status).toBeLessThan(500);
          expect(result.error.code).toMatch(/^[a-z_]+$/);
          expect(result.error.error.length).toBeGreaterThan(10);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parses any bytes into a JSON value or a 400 that says the body is not JSON', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const parsed = parseJsonBody(Buffer.from(bytes));
        if (!parsed.ok) expect(parsed.error).toMatchObject({ status: 400 });
      }),
    );
  });

  it('accepts every well-formed batch whole, and stores each message as sent, keyed by anonymousId else userId', () => {
    fc.assert(
      fc.property(fc.array(validMessage, { minLength: 1, maxLength: 20 }), fc.option(freeForm, { nil: undefined }), (batch, context) => {
        const body: JsonObject = { batch: batch.map((message) => ({ ...message })) };
        if (context !== undefined) body.context = context;
        const result = validateRequest(body, 'batch');
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(result.request.messages).toHaveLength(batch.length);
        result.request.messages.forEach((valid, index) => {
          const sent = batch[index]!;
          const stored = toIngestMessage(valid, result.request.envelope, receipt);
          expect(stored.type).toBe(sent.type);
          if (typeof sent.messageId === 'string') expect(stored.messageId).toBe(sent.messageId);
          expect(stored.userId).toBe(sent.userId ?? null);
          expect(stored.anonymousId).toBe(sent.anonymousId ?? null);
          expect(recordKey(stored)).toBe(stored.anonymousId ?? stored.userId);
          expect(stored.receivedAt).toBe(RECEIVED_AT);
          if (sent.properties !== undefined) expect(JSON.parse(stored.properties!)).toEqual(JSON.parse(JSON.stringify(sent.properties)));
          // The message's own context wins over the batch's, key by key, nested objects merged.
          const storedContext = stored.context === null ? {} : (JSON.parse(stored.context) as JsonObject);
          if (isJsonObject(sent.context)) expect(containsDeep(storedContext, JSON.parse(JSON.stringify(sent.context)) as JsonObject)).toBe(true);
          // What is stored encodes to the ingest topic's schema.
          expect(ingestType.isValid(stored), JSON.stringify(stored)).toBe(true);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a whole batch when one message breaks a rule, naming that message', () => {
    fc.assert(
      fc.property(fc.array(validMessage, { minLength: 1, maxLength: 10 }), fc.nat(), (batch, pick) => {
        const index = pick % batch.length;
        const broken = batch.map((message, at) => (at === index ? { ...message, userId: undefined, anonymousId: undefined } : message));
        const result = validateRequest({ batch: broken }, 'batch');
        expect(result.ok).toBe(false);
        if (result.ok) return;
        const errors = (result.error.details?.errors ?? []) as Array<{ index: number | null }>;
        expect(errors.some((error) => error.index === index)).toBe(true);
      }),
    );
  });

  it('holds ids to their limits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_000 }), fc.constantFrom('messageId', 'userId', 'anonymousId', 'groupId', 'previousId'), (length, field) => {
        const message: JsonObject = { type: 'group', userId: 'u', groupId: 'g', previousId: 'p', [field]: 'x'.repeat(length) };
        const limit = field === 'messageId' ? MAX_MESSAGE_ID_LENGTH : MAX_ID_LENGTH;
        expect(validateRequest(message, 'group').ok).toBe(length <= limit);
      }),
      { numRuns: 200 },
    );
  });

  it('never accepts a message that would be written larger than 32 KB with the batch context merged in', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40_000 }), fc.integer({ min: 0, max: 40_000 }), (own, shared) => {
        const body = { batch: [{ type: 'track', userId: 'u', event: 'e', properties: { pad: 'p'.repeat(own) } }], context: { pad: 'c'.repeat(shared) } };
        const result = validateRequest(body, 'batch');
        if (!result.ok) return;
        const stored: IngestMessage = toIngestMessage(result.request.messages[0]!, result.request.envelope, receipt);
        expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThan(MAX_MESSAGE_BYTES + 1_000);
      }),
      { numRuns: 100 },
    );
  });
});
