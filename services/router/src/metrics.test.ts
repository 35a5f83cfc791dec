import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { QUARANTINE_REASONS } from '@tributary/shared';
import { INVALID_REASONS, InvalidMessage } from './message.js';
import { createRouterMetrics } from './metrics.js';

async function sample(registry: Registry, name: string): Promise<Array<{ labels: object; value: number }>> {
  const metric = registry.getSingleMetric(name);
  return metric ? (await metric.get()).values.map(({ labels, value }) => ({ labels, value })) : [];
}

describe('router metrics', () => {
  it('exposes every filter, invalid and quarantine reason from the start, at zero', async () => {
    const registry = new Registry();
    createRouterMetrics(registry, () => 0, ['t.ingest.v1', 't.ingest.overflow.v1']);
    expect((await sample(registry, 'tributary_router_filtered_total')).map(({ labels }) => labels)).toEqual([
      { reason: 'integrations_off' },
      { reason: 'destination_disabled' },
      { reason: 'no_destinations' },
      { reason: 'source_disabled' },
    ]);
    expect(await sample(registry, 'tributary_router_invalid_total')).toHaveLength(INVALID_REASONS.length);
    // Each reason of both ingest topics, so the first poison record is an increase from 0.
    const quarantined = await sample(registry, 'tributary_quarantined_total');
    expect(quarantined).toHaveLength(2 * QUARANTINE_REASONS.length);
    expect(quarantined.every(({ value }) => value === 0)).toBe(true);
    expect(quarantined).toContainEqual({ labels: { topic: 't.ingest.overflow.v1', reason: 'too_deep' }, value: 0 });
  });

  it('adds a committed chunk\'s outcome and reports the dedup size', async () => {
    const registry = new Registry();
    const metrics = createRouterMetrics(registry, () => 42, ['t.ingest.v1']);
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
