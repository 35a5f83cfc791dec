import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { INVALID_REASONS, InvalidMessage } from './message.js';
import { createRouterMetrics } from './metrics.js';

async function sample(registry: Registry, name: string): Promise<Array<{ labels: object; value: number }>> {
  const metric = registry.getSingleMetric(name);
  return metric ? (await metric.get()).values.map(({ labels, value }) => ({ labels, value })) : [];
}

describe('router metrics', () => {
  it('exposes every filter and invalid reason from the start, at zero', async () => {
    const registry = new Registry();
    createRouterMetrics(registry, () => 0);
    expect((await sample(registry, 'tributary_router_filtered_total')).map(({ labels }) => labels)).toEqual([
      { reason: 'integrations_off' },
      { reason: 'destination_disabled' },
      { reason: 'no_destinations' },
      { reason: 'source_disabled' },
    ]);
    expect(await sample(registry, 'tributary_router_invalid_total')).toHaveLength(INVALID_REASONS.length);
  });

  it('adds a committed chunk\'s outcome and reports the dedup size', async () => {
    const registry = new Registry();
    const metrics = createRouterMetrics(registry, () => 42);
    metrics.recordCommitted({
      deliveries: [],
      routed: new Map([['crm', 3], ['bi', 1]]),
      configFiltered: new Map(),
      filtered: new Map([['integrations_off', 2]]),
      duplicates: 5,
      invalid: [{ offset: '7', raw: { key: null, value: null, timestamp: '0' }, error: new InvalidMessage('invalid_json', 'x') }],
    });
    expect(await sample(registry, 'tributary_router_routed_total')).toEqual([
      { labels: { destination: 'crm' }, value: 3 },
      { labels: { destination: 'bi' }, value: 1 },
    ]);
    expect((await sample(registry, 'tributary_router_filtered_total')).find(({ labels }) => 'reason' in labels && labels.reason === 'integrations_off')?.value).toBe(2);
    expect(await sample(registry, 'tributary_router_duplicates_total')).toEqual([{ labels: {}, value: 5 }]);
    expect((await sample(registry, 'tributary_router_invalid_total')).find(({ labels }) => 'reason' in labels && labels.reason === 'invalid_json')?.value).toBe(1);
    expect(await sample(registry, 'tributary_router_dedup_entries')).toEqual([{ labels: {}, value: 42 }]);
  });
});
