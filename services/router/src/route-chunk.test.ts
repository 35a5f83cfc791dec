import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Destination, IngestMessage, Source } from '@tributary/schemas';
import { FIXTURES } from './__fixtures__/messages.js';
import { DedupState } from './dedup.js';
import { InvalidMessage } from './message.js';
import { routeChunk, routingWeight, type ConfigLookup, type DecodedRecord } from './route-chunk.js';

const NOW = Date.parse('2026-11-21T10:00:05.000Z');

const destination = (id: string, sources: string[], enabled = true): Destination => ({
  id,
  name: id,
  type: 'webhooks',
  sources,
  enabled,
  settings: { sharedSecret: 's3cret', standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/x', headers: {} }] },
});

function lookup(sources: Source[], destinations: Destination[]): ConfigLookup {
  return {
    source: (id) => sources.find((source) => source.id === id),
    destinationsForSource: (id) => destinations.filter((d) => d.sources.includes(id)),
  };
}

const web: Source = { id: 'web', name: 'Web', writeKey: 'wk_web_123', enabled: true };
const config = lookup([web, { id: 'off', name: 'Off', writeKey: 'wk_off_123', enabled: false }], [destination('crm', ['web']), destination('bi', ['web', 'off'])]);

let offset = 0;
const raw = { key: null, value: null, timestamp: '0' };
const record = (message: IngestMessage): DecodedRecord => ({ offset: String(offset++), raw, message });
const newState = () => new DedupState({ windowMs: 86_400_000, maxEntries: 1000, maxBytes: 1e9 });

describe('routeChunk', () => {
  it('makes one delivery per enabled destination, keyed by destination, source and message, sharing one body', () => {
    const outcome = routeChunk([record(FIXTURES.track)], config, newState().claims(NOW));
    expect(outcome.deliveries.map((d) => d.deliveryId)).toEqual(['crm/web/msg-track-1', 'bi/web/msg-track-1']);
    const [first, second] = outcome.deliveries;
    expect(first).toEqual({
      deliveryId: 'crm/web/msg-track-1',
      destinationId: 'crm',
      sourceId: 'web',
      messageId: 'msg-track-1',
      messageType: 'track',
      userId: FIXTURES.track.userId,
      anonymousId: FIXTURES.track.anonymousId,
      body: readFileSync(new URL('./__golden__/track.json', import.meta.url)),
      receivedAt: FIXTURES.track.receivedAt,
      routedAt: NOW,
      attempts: 0,
      firstAttemptAt: null,
      lastError: null,
      lastStatus: null,
      replays: 0,
    });
    expect(second!.body).toBe(first!.body);
    expect(outcome.routed).toEqual(new Map([['crm', 1], ['bi', 1]]));
    expect(outcome.filtered.size).toBe(0);
  });

  it('counts filter reasons per destination or per message', () => {
    const withDisabled = lookup([web], [destination('crm', ['web'], false), destination('bi', ['web'])]);
    const outcome = routeChunk(
      [
        record({ ...FIXTURES.track, messageId: 'off-1', integrations: '{"Webhooks":false}' }),
        record({ ...FIXTURES.identify, messageId: 'unknown-source', sourceId: 'nope' }),
      ],
      withDisabled,
      newState().claims(NOW),
    );
    expect(outcome.deliveries).toEqual([]);
    expect(outcome.filtered).toEqual(
      new Map([
        ['destination_disabled', 1],
        ['integrations_off', 1],
        ['no_destinations', 1],
      ]),
    );
  });

  it('filters a disabled source', () => {
    const outcome = routeChunk([record({ ...FIXTURES.page, sourceId: 'off' })], config, newState().claims(NOW));
    expect(outcome.filtered).toEqual(new Map([['source_disabled', 1]]));
  });

  it('honours integrations found only in context.integrations', () => {
    const direct = { ...FIXTURES.group, integrations: null, context: '{"integrations":{"All":false}}' };
    expect(routeChunk([record(direct)], config, newState().claims(NOW)).filtered).toEqual(new Map([['integrations_off', 2]]));
  });

  it('forwards a repeated messageId once, inside one chunk and across chunks', () => {
    const state = newState();
    const first = state.claims(NOW);
    const outcome = routeChunk([record(FIXTURES.identify), record({ ...FIXTURES.identify, traits: '{"changed":true}' })], config, first);
    expect(outcome.deliveries).toHaveLength(2);
    expect(outcome.duplicates).toBe(1);
    expect(first.records()).toEqual([{ firstSeenAt: NOW, keys: ['web/msg-identify-1'] }]);
    first.commit();

    const later = routeChunk([record(FIXTURES.identify)], config, state.claims(NOW + 1000));
    expect(later.deliveries).toEqual([]);
    expect(later.duplicates).toBe(1);
  });

  it('the same messageId from another source is another message, with a delivery id of its own', () => {
    const both = lookup([web, { ...web, id: 'app' }], [destination('crm', ['web', 'app'])]);
    const outcome = routeChunk([record(FIXTURES.alias), record({ ...FIXTURES.alias, sourceId: 'app' })], both, newState().claims(NOW));
    expect(outcome.deliveries.map((d) => `${d.sourceId}:${d.deliveryId}`)).toEqual(['web:crm/web/msg-alias-1', 'app:crm/app/msg-alias-1']);
  });

  it('does not remember messages it did not forward', () => {
    const claims = newState().claims(NOW);
    routeChunk([record({ ...FIXTURES.track, integrations: '{"All":false}' }), record({ ...FIXTURES.track, sourceId: 'nope' })], config, claims);
    expect(claims.records()).toEqual([]);
  });

  it('reports invalid records with their offsets and goes on with the rest', () => {
    const undecodable: DecodedRecord = { offset: '41', raw, invalid: new InvalidMessage('undecodable', 'garbage') };
    const outcome = routeChunk(
      [
        undecodable,
        { offset: '42', raw, message: { ...FIXTURES.track, event: null } },
        { offset: '43', raw, message: { ...FIXTURES.track, messageId: 'bad-json', properties: '{oops' } },
        { offset: '44', raw, message: FIXTURES.screen },
      ],
      config,
      newState().claims(NOW),
    );
    expect(outcome.invalid.map(({ offset, error }) => [offset, error.reason])).toEqual([
      ['41', 'undecodable'],
      ['42', 'missing_field'],
      ['43', 'invalid_json'],
    ]);
    expect(outcome.deliveries.map((d) => d.deliveryId)).toEqual(['crm/web/msg-screen-1', 'bi/web/msg-screen-1']);
  });

  it('does not parse the free-form fields of a message nobody receives', () => {
    const outcome = routeChunk([record({ ...FIXTURES.track, sourceId: 'nope', properties: '{oops' })], config, newState().claims(NOW));
    expect(outcome.invalid).toEqual([]);
    expect(outcome.filtered).toEqual(new Map([['no_destinations', 1]]));
  });

  it('routes a delete to the source\'s destinations, whatever the integrations', () => {
    const outcome = routeChunk([record(FIXTURES.delete)], config, newState().claims(NOW));
    expect(outcome.deliveries.map((d) => [d.deliveryId, d.messageType, d.body.toString()])).toEqual([
      ['crm/web/msg-delete-1', 'delete', readFileSync(new URL('./__golden__/delete.json', import.meta.url), 'utf8')],
      ['bi/web/msg-delete-1', 'delete', readFileSync(new URL('./__golden__/delete.json', import.meta.url), 'utf8')],
    ]);
  });
});

describe('routingWeight', () => {
  const sized = (message: IngestMessage, bytes: number): DecodedRecord => ({ offset: '0', raw: { ...raw, value: Buffer.alloc(bytes) }, message });

  it('estimates what routing a record writes: its bytes once per enabled destination of its source', () => {
    expect(routingWeight(sized(FIXTURES.track, 30_000), config)).toBe(60_000);
    expect(routingWeight(sized({ ...FIXTURES.track, sourceId: 'nobody' }, 30_000), config)).toBe(30_000);
    // A disabled destination gets no delivery, so it adds nothing (all disabled: the record's own bytes).
    const oneDisabled = lookup([web], [destination('crm', ['web'], false), destination('bi', ['web']), destination('ops', ['web'])]);
    expect(routingWeight(sized(FIXTURES.track, 30_000), oneDisabled)).toBe(60_000);
    const allDisabled = lookup([web], [destination('crm', ['web'], false)]);
    expect(routingWeight(sized(FIXTURES.track, 30_000), allDisabled)).toBe(30_000);
  });

  it('counts an invalid record by its own bytes (it goes to the quarantine once)', () => {
    expect(routingWeight({ offset: '0', raw: { ...raw, value: Buffer.alloc(500) }, invalid: new InvalidMessage('not_framed', 'x') }, config)).toBe(500);
  });
});
