/**
 * prepareCall holds every record it returns to the router's nesting rule: free-form fields
 * start one level into a single call's body and a batch's context and integrations are merged
 * into every message, so the body-level guard alone let records through that the router then
 * quarantined as too_deep — accepted, then dropped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { FREE_FORM_FIELDS } from './free-form-depth.js';
import { parseJsonBody } from './json-body.js';
import { prepareCall, type PreparedCall } from './segment-call.js';
import type { CallKind } from './validation.js';

const receipt = { sourceId: 'web', receivedAt: Date.parse('2026-11-24T10:00:00Z'), newMessageId: () => 'generated' };

/** An object nesting `levels` objects deep, itself included. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  return value;
}

/** As ingest prepares a body: parsed with the nesting scan, its finding passed on. */
function prepareBody(body: unknown, kind: CallKind): PreparedCall {
  const parsed = parseJsonBody(Buffer.from(JSON.stringify(body)));
  if (!parsed.ok) return parsed;
  return prepareCall(parsed.value, kind, receipt, { fieldsWithinDepth: parsed.fieldsWithinDepth });
}

function refusal(result: PreparedCall) {
  if (result.ok) throw new Error('expected a refusal');
  return result.error;
}

describe('prepareCall: the router nesting rule', () => {
  it("refuses a single call's properties one level past the limit, naming the field", () => {
    expect(prepareBody({ userId: 'u', event: 'e', properties: nested(MAX_JSON_DEPTH) }, 'track').ok).toBe(true);
    expect(refusal(prepareBody({ userId: 'u', event: 'e', messageId: 'm-1', properties: nested(MAX_JSON_DEPTH + 1) }, 'track'))).toEqual({
      status: 400,
      code: 'too_deep',
      error: `message 0: properties nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; flatten it; nothing in this request was accepted`,
      details: {
        limit: MAX_JSON_DEPTH,
        errors: [{ index: 0, messageId: 'm-1', field: 'properties', message: `properties nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; flatten it` }],
        errorCount: 1,
      },
    });
  });

  it("refuses a batch whose context, merged into each message, is past the limit — every message named, nothing accepted", () => {
    const body = { context: { app: nested(MAX_JSON_DEPTH) }, batch: [{ type: 'track', userId: 'u', event: 'e' }, { type: 'identify', userId: 'u', context: { locale: 'en' } }] };
    const error = refusal(prepareBody(body, 'batch'));
    expect(error).toMatchObject({ status: 400, code: 'too_deep', details: { limit: MAX_JSON_DEPTH, errorCount: 2 } });
    expect(error.details?.errors).toEqual([0, 1].map((index) => ({
      index,
      messageId: null,
      field: 'context',
      message: `context nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep (with the batch's context merged in); flatten it`,
    })));
    expect(prepareBody({ ...body, context: { app: nested(MAX_JSON_DEPTH - 1) } }, 'batch').ok).toBe(true);
  });

  it("refuses a batch's integrations past the limit, and the message's own traits", () => {
    const integrations = refusal(prepareBody({ integrations: { Webhooks: nested(MAX_JSON_DEPTH) }, batch: [{ type: 'track', userId: 'u', event: 'e' }] }, 'batch'));
    expect(integrations.details?.errors).toMatchObject([{ index: 0, field: 'integrations' }]);
    const traits = refusal(prepareBody({ userId: 'u', traits: nested(MAX_JSON_DEPTH + 1) }, 'identify'));
    expect(traits.details?.errors).toMatchObject([{ index: 0, field: 'traits' }]);
  });

  it('checks every record when not told the body is shallow (as @tributary/producer calls it)', () => {
    expect(refusal(prepareCall({ userId: 'u', event: 'e', properties: nested(MAX_JSON_DEPTH + 1) }, 'track', receipt)).code).toBe('too_deep');
  });

  it('validates first: a broken message is reported as such', () => {
    expect(refusal(prepareBody({ userId: 'u', properties: nested(MAX_JSON_DEPTH + 1) }, 'track')).code).toBe('validation_failed');
  });

  it('writes nothing the router would quarantine as too deep, whatever the nesting and where it is', () => {
    const depth = fc.integer({ min: 1, max: MAX_JSON_DEPTH + 4 });
    const part = fc.option(depth.map(nested), { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({ batchContext: part, batchIntegrations: part, properties: part, traits: part, context: part, integrations: part, inContext: part }),
        fc.boolean(),
        ({ batchContext, batchIntegrations, properties, traits, context, integrations, inContext }, single) => {
          const message: Record<string, unknown> = { type: 'identify', userId: 'u' };
          const own = { properties, traits, integrations, context: inContext === undefined ? context : { ...context, integrations: inContext } };
          for (const [key, value] of Object.entries(own)) if (value !== undefined) message[key] = value;
          const body: Record<string, unknown> = single ? message : { batch: [message] };
          if (!single && batchContext !== undefined) body.context = batchContext;
          if (!single && batchIntegrations !== undefined) body.integrations = batchIntegrations;
          const result = prepareBody(body, single ? 'identify' : 'batch');
          // Skipping the per-record check on a shallow body never changes the decision.
          const parsed = parseJsonBody(Buffer.from(JSON.stringify(body)));
          if (parsed.ok) expect(prepareCall(parsed.value, single ? 'identify' : 'batch', receipt).ok).toBe(result.ok);
          if (!result.ok) {
            expect(result.error.code).toBe('too_deep');
            return;
          }
          for (const { message: record } of result.messages) {
            for (const field of FREE_FORM_FIELDS) {
              const text = record[field];
              if (text !== null) expect(nestsDeeperThan(text, MAX_JSON_DEPTH), field).toBe(false);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('prepareCall: what the records are written as', () => {
  it("reports the bytes the messages are written as, the batch's context in each of them", () => {
    const context = { pad: 'c'.repeat(1_000) };
    const prepared = prepareBody({ context, batch: Array.from({ length: 10 }, () => ({ type: 'track', userId: 'u', event: 'e' })) }, 'batch');
    if (!prepared.ok) throw new Error('expected acceptance');
    expect(prepared.expandedBytes).toBeGreaterThanOrEqual(10 * Buffer.byteLength(JSON.stringify(context)));
    const written = prepared.messages.reduce((sum, { message }) => sum + Buffer.byteLength(message.context ?? ''), 0);
    expect(prepared.expandedBytes).toBeGreaterThanOrEqual(written);
  });
});
