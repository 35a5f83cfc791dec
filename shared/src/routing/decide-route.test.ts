import { describe, expect, it } from 'vitest';
import type { Destination, Source } from '@tributary/schemas';
import { decideRoute } from './decide-route.js';

const source = (overrides: Partial<Source> = {}): Source => ({ id: 'web', name: 'Web', writeKey: 'wk_web_123', enabled: true, ...overrides });
const destination = (id: string, overrides: Partial<Destination> = {}): Destination => ({
  id,
  name: id,
  type: 'webhooks',
  sources: ['web'],
  enabled: true,
  settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/x', headers: {} }] },
  ...overrides,
});
const on = () => true;
const off = () => false;
const ids = (destinations: Destination[]) => destinations.map((d) => d.id);

describe('decideRoute', () => {
  it('sends to every enabled Webhooks destination of the source', () => {
    const decision = decideRoute(source(), [destination('a'), destination('b')], on);
    expect(ids(decision.destinations)).toEqual(['a', 'b']);
    expect(decision.filtered).toEqual([]);
  });

  it('filters a disabled destination by name and still sends to the others', () => {
    const decision = decideRoute(source(), [destination('a', { enabled: false }), destination('b')], on);
    expect(ids(decision.destinations)).toEqual(['b']);
    expect(decision.filtered).toEqual([{ reason: 'destination_disabled', destinationId: 'a' }]);
  });

  it('integrations turning Webhooks off filters each enabled destination', () => {
    const decision = decideRoute(source(), [destination('a'), destination('b', { enabled: false })], off);
    expect(decision.destinations).toEqual([]);
    expect(decision.filtered).toEqual([
      { reason: 'destination_disabled', destinationId: 'b' },
      { reason: 'integrations_off', destinationId: 'a' },
    ]);
  });

  it('an unknown source has no destinations', () => {
    expect(decideRoute(undefined, [], on)).toEqual({ destinations: [], filtered: [{ reason: 'no_destinations' }] });
  });

  it('a source with nothing connected has no destinations', () => {
    expect(decideRoute(source(), [], on)).toEqual({ destinations: [], filtered: [{ reason: 'no_destinations' }] });
  });

  it('a destination of another type does not count as connected', () => {
    expect(decideRoute(source(), [destination('x', { type: 'warehouse' })], on).filtered).toEqual([{ reason: 'no_destinations' }]);
  });

  it('a disabled source is filtered once, whatever is connected', () => {
    expect(decideRoute(source({ enabled: false }), [destination('a')], on)).toEqual({ destinations: [], filtered: [{ reason: 'source_disabled' }] });
  });

  it('reads the integrations only when an enabled destination is connected', () => {
    let asked = 0;
    const counting = () => {
      asked++;
      return true;
    };
    decideRoute(undefined, [], counting);
    decideRoute(source({ enabled: false }), [destination('a')], counting);
    decideRoute(source(), [destination('a', { enabled: false })], counting);
    expect(asked).toBe(0);
    decideRoute(source(), [destination('a'), destination('b')], counting);
    expect(asked).toBe(1);
  });
});
