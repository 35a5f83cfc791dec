import { describe, expect, it } from 'vitest';
import type { Destination, DestinationHealth, DestinationSummary } from './api';
import { backlogTotal, destinationRows, destinationsOf, headerNames, signingOf } from './overview';

function destination(id: string, fields: Partial<Destination['settings']> = {}, sources = ['web']): Destination {
  return {
    id,
    name: id,
    type: 'webhooks',
    sources,
    enabled: true,
    settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://h.example/x', headers: {} }], ...fields },
  };
}

const backlog = { firstAttempts: 1, retries: 2, inFlight: 3 };
const health = (destinationId: string): DestinationHealth => ({ destinationId, state: 'open', backlog, instances: [], updatedAt: null });
const summary = (destinationId: string) => ({ destinationId }) as DestinationSummary;

describe('destinationRows', () => {
  it('joins config, health and summary by destination id, sorted by id', () => {
    const rows = destinationRows([destination('b'), destination('a')], [health('a')], [summary('b')]);
    expect(rows.map((row) => [row.destination.id, row.health?.state, row.summary?.destinationId])).toEqual([
      ['a', 'open', undefined],
      ['b', undefined, 'b'],
    ]);
  });

  it('holds what there is when health or the summary did not answer', () => {
    expect(destinationRows([destination('a')], undefined, undefined)).toEqual([{ destination: destination('a'), health: undefined, summary: undefined }]);
  });
});

describe('details', () => {
  it('adds up a backlog', () => {
    expect(backlogTotal(backlog)).toBe(6);
    expect(backlogTotal(undefined)).toBe(0);
  });

  it('lists the destinations a source feeds', () => {
    const destinations = [destination('a', {}, ['web']), destination('b', {}, ['ios']), destination('c', {}, ['web', 'ios'])];
    expect(destinationsOf({ id: 'web', name: 'Web', writeKey: 'k', enabled: true }, destinations)).toEqual(['a', 'c']);
  });

  it('says how requests are signed without showing a secret', () => {
    expect(signingOf(destination('a'))).toBe('unsigned');
    expect(signingOf(destination('a', { sharedSecret: '[redacted]' }))).toBe('X-Signature (HMAC-SHA1)');
    expect(signingOf(destination('a', { sharedSecret: '[redacted]', standardWebhooksSecret: '[redacted]' }))).toBe('X-Signature (HMAC-SHA1), Standard Webhooks');
  });

  it('shows header names only', () => {
    expect(headerNames({ 'X-Team': 'growth', Authorization: 'Bearer secret' })).toEqual(['Authorization', 'X-Team']);
  });
});
